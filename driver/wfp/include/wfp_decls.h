/* Hand-written declarations of the WFP kernel API that SieveQ uses, from
 * Microsoft's public documentation (fwpsk.h, fwpmk.h, fwptypes.h,
 * fwpmtypes.h, ndis/nbl.h pages on learn.microsoft.com). mingw-w64 ships no
 * fwpsk.h; with the WDK the real headers are used instead (SQFW_USE_WDK).
 *
 * Layouts must match the documented ones exactly: every structure whose
 * layout matters has _Static_assert checks on size and member offsets (and
 * every layer id and field index has one on its value, in ../fwps_fields.h),
 * computed by hand from the documented member lists and the x64 ABI. A
 * mistake here would corrupt memory in the kernel, so the assertions are
 * the first line of defence, not decoration. Only x64 is supported. */
#ifndef SQFW_WFP_DECLS_H
#define SQFW_WFP_DECLS_H

#ifdef SQFW_USE_WDK
#include <ntifs.h> /* first: PsLookupProcessByProcessId, ObOpenObjectByPointer, ZwSetSecurityObject, RtlCreateAcl */
#include <fwpsk.h>
#include <fwpmk.h>
#else

#include <ntddk.h>
#include <stddef.h>

#if !defined(_WIN64)
#error "SieveQ's WFP declarations are checked for x64 only"
#endif

typedef struct NET_BUFFER_ NET_BUFFER;
typedef struct NET_BUFFER_LIST_ NET_BUFFER_LIST;
typedef ULONG IF_INDEX;
typedef UINT32 COMPARTMENT_ID;
typedef USHORT ADDRESS_FAMILY;
typedef PVOID NDIS_HANDLE;
#ifndef AF_INET
#define AF_INET 2
#define AF_INET6 23
#endif

/* NET_BUFFER / NET_BUFFER_LIST: only the documented leading members that the
 * shaper reads (list links and data length). */
struct NET_BUFFER_ {
    NET_BUFFER *Next;
    PMDL CurrentMdl;
    ULONG CurrentMdlOffset;
    union {
        ULONG DataLength;
        SIZE_T stDataLength;
    };
    PMDL MdlChain;
    ULONG DataOffset;
};
_Static_assert(offsetof(NET_BUFFER, CurrentMdl) == 8, "NET_BUFFER.CurrentMdl");
_Static_assert(offsetof(NET_BUFFER, DataLength) == 24, "NET_BUFFER.DataLength");
_Static_assert(offsetof(NET_BUFFER, MdlChain) == 32, "NET_BUFFER.MdlChain");

struct NET_BUFFER_LIST_ {
    NET_BUFFER_LIST *Next;
    NET_BUFFER *FirstNetBuffer;
};
_Static_assert(offsetof(NET_BUFFER_LIST, FirstNetBuffer) == 8, "NET_BUFFER_LIST.FirstNetBuffer");

/* ---- fwptypes.h ---- */
typedef enum FWP_DATA_TYPE_ {
    FWP_EMPTY = 0,
    FWP_UINT8 = 1,
    FWP_UINT16 = 2,
    FWP_UINT32 = 3,
    FWP_UINT64 = 4,
    FWP_INT8 = 5,
    FWP_INT16 = 6,
    FWP_INT32 = 7,
    FWP_INT64 = 8,
    FWP_FLOAT = 9,
    FWP_DOUBLE = 10,
    FWP_BYTE_ARRAY16_TYPE = 11,
    FWP_BYTE_BLOB_TYPE = 12,
    FWP_SID = 13,
    FWP_SECURITY_DESCRIPTOR_TYPE = 14,
    FWP_TOKEN_INFORMATION_TYPE = 15,
    FWP_TOKEN_ACCESS_INFORMATION_TYPE = 16,
    FWP_UNICODE_STRING_TYPE = 17
} FWP_DATA_TYPE;

typedef struct FWP_BYTE_BLOB_ {
    UINT32 size;
    UINT8 *data;
} FWP_BYTE_BLOB;
_Static_assert(sizeof(FWP_BYTE_BLOB) == 16 && offsetof(FWP_BYTE_BLOB, data) == 8, "FWP_BYTE_BLOB");

typedef struct FWP_BYTE_ARRAY16_ {
    UINT8 byteArray16[16];
} FWP_BYTE_ARRAY16;

typedef struct FWP_VALUE0_ {
    FWP_DATA_TYPE type;
    union {
        UINT8 uint8;
        UINT16 uint16;
        UINT32 uint32;
        UINT64 *uint64;
        INT8 int8;
        INT16 int16;
        INT32 int32;
        INT64 *int64;
        float float32;
        double *double64;
        FWP_BYTE_ARRAY16 *byteArray16;
        FWP_BYTE_BLOB *byteBlob;
        void *sid; /* SID * */
        FWP_BYTE_BLOB *sd;
        void *tokenInformation;
        FWP_BYTE_BLOB *tokenAccessInformation;
        PWSTR unicodeString;
    };
} FWP_VALUE0;
_Static_assert(sizeof(FWP_VALUE0) == 16 && offsetof(FWP_VALUE0, uint32) == 8, "FWP_VALUE0");
typedef FWP_VALUE0 FWP_CONDITION_VALUE0;

typedef UINT32 FWP_ACTION_TYPE;
#define FWP_ACTION_FLAG_TERMINATING 0x00001000u
#define FWP_ACTION_FLAG_NON_TERMINATING 0x00002000u
#define FWP_ACTION_FLAG_CALLOUT 0x00004000u
#define FWP_ACTION_BLOCK (0x1u | FWP_ACTION_FLAG_TERMINATING)
#define FWP_ACTION_PERMIT (0x2u | FWP_ACTION_FLAG_TERMINATING)
#define FWP_ACTION_CALLOUT_TERMINATING (0x3u | FWP_ACTION_FLAG_CALLOUT | FWP_ACTION_FLAG_TERMINATING)
#define FWP_ACTION_CALLOUT_INSPECTION (0x4u | FWP_ACTION_FLAG_CALLOUT | FWP_ACTION_FLAG_NON_TERMINATING)
#define FWP_ACTION_CONTINUE (0x6u | FWP_ACTION_FLAG_NON_TERMINATING)

typedef enum FWP_MATCH_TYPE_ { FWP_MATCH_EQUAL = 0 } FWP_MATCH_TYPE;

/* FWP_CONDITION_FLAG_* as reported in the ALE layers' FLAGS field */
#define FWP_CONDITION_FLAG_IS_LOOPBACK 0x00000001u
#define FWP_CONDITION_FLAG_IS_IPSEC_SECURED 0x00000002u
#define FWP_CONDITION_FLAG_IS_REAUTHORIZE 0x00000004u

/* FWP_DIRECTION, as reported in ALE_FLOW_ESTABLISHED's DIRECTION field */
#define FWP_DIRECTION_OUTBOUND 0u
#define FWP_DIRECTION_INBOUND 1u

/* ---- fwpsk.h: layer ids and field indices live in ../fwps_fields.h ---- */

typedef struct FWPS_INCOMING_VALUE0_ {
    FWP_VALUE0 value;
} FWPS_INCOMING_VALUE0;

typedef struct FWPS_INCOMING_VALUES0_ {
    UINT16 layerId;
    UINT32 valueCount;
    FWPS_INCOMING_VALUE0 *incomingValue;
} FWPS_INCOMING_VALUES0;
_Static_assert(sizeof(FWPS_INCOMING_VALUES0) == 16, "FWPS_INCOMING_VALUES0 size");
_Static_assert(offsetof(FWPS_INCOMING_VALUES0, valueCount) == 4, "FWPS_INCOMING_VALUES0.valueCount");
_Static_assert(offsetof(FWPS_INCOMING_VALUES0, incomingValue) == 8, "FWPS_INCOMING_VALUES0.incomingValue");

typedef struct FWPS_DISCARD_METADATA0_ {
    UINT32 discardModule;
    UINT32 discardReason;
    UINT64 filterId;
} FWPS_DISCARD_METADATA0;

typedef struct FWPS_INBOUND_FRAGMENT_METADATA0_ {
    UINT32 fragmentIdentification;
    UINT16 fragmentOffset;
    ULONG fragmentLength;
} FWPS_INBOUND_FRAGMENT_METADATA0;
_Static_assert(sizeof(FWPS_INBOUND_FRAGMENT_METADATA0) == 12, "FWPS_INBOUND_FRAGMENT_METADATA0");

/* Leading members of FWPS_INCOMING_METADATA_VALUES0: the engine owns the
 * structure and passes a pointer; the driver reads only these. */
typedef struct FWPS_INCOMING_METADATA_VALUES0_ {
    UINT32 currentMetadataValues;
    UINT32 flags;
    UINT64 reserved;
    FWPS_DISCARD_METADATA0 discardMetadata;
    UINT64 flowHandle;
    UINT32 ipHeaderSize;
    UINT32 transportHeaderSize;
    FWP_BYTE_BLOB *processPath;
    UINT64 token;
    UINT64 processId;
    UINT32 sourceInterfaceIndex;
    UINT32 destinationInterfaceIndex;
    ULONG compartmentId;
    FWPS_INBOUND_FRAGMENT_METADATA0 fragmentMetadata;
    ULONG pathMtu;
    HANDLE completionHandle;
    UINT64 transportEndpointHandle;
    ULONG remoteScopeId;
    void *controlData;
    ULONG controlDataLength;
    UINT32 packetDirection;
} FWPS_INCOMING_METADATA_VALUES0;
_Static_assert(offsetof(FWPS_INCOMING_METADATA_VALUES0, discardMetadata) == 16, "metadata.discardMetadata");
_Static_assert(offsetof(FWPS_INCOMING_METADATA_VALUES0, flowHandle) == 32, "metadata.flowHandle");
_Static_assert(offsetof(FWPS_INCOMING_METADATA_VALUES0, processPath) == 48, "metadata.processPath");
_Static_assert(offsetof(FWPS_INCOMING_METADATA_VALUES0, processId) == 64, "metadata.processId");
_Static_assert(offsetof(FWPS_INCOMING_METADATA_VALUES0, compartmentId) == 80, "metadata.compartmentId");
_Static_assert(offsetof(FWPS_INCOMING_METADATA_VALUES0, completionHandle) == 104, "metadata.completionHandle");
_Static_assert(offsetof(FWPS_INCOMING_METADATA_VALUES0, transportEndpointHandle) == 112, "metadata.endpoint");
_Static_assert(offsetof(FWPS_INCOMING_METADATA_VALUES0, packetDirection) == 140, "metadata.packetDirection");

#define FWPS_METADATA_FIELD_FLOW_HANDLE 0x00000002u
#define FWPS_METADATA_FIELD_IP_HEADER_SIZE 0x00000004u
#define FWPS_METADATA_FIELD_PROCESS_PATH 0x00000008u
#define FWPS_METADATA_FIELD_TOKEN 0x00000010u
#define FWPS_METADATA_FIELD_PROCESS_ID 0x00000020u
#define FWPS_METADATA_FIELD_TRANSPORT_HEADER_SIZE 0x00000400u
#define FWPS_METADATA_FIELD_COMPARTMENT_ID 0x00000800u
#define FWPS_METADATA_FIELD_COMPLETION_HANDLE 0x00004000u
#define FWPS_METADATA_FIELD_TRANSPORT_ENDPOINT_HANDLE 0x00008000u
#define FWPS_METADATA_FIELD_REMOTE_SCOPE_ID 0x00020000u
#define FWPS_METADATA_FIELD_ALE_CLASSIFY_REQUIRED 0x00400000u

typedef struct FWPS_CLASSIFY_OUT0_ {
    FWP_ACTION_TYPE actionType;
    UINT64 outContext;
    UINT64 filterId;
    UINT32 rights;
    UINT32 flags;
    UINT32 reserved;
} FWPS_CLASSIFY_OUT0;
_Static_assert(sizeof(FWPS_CLASSIFY_OUT0) == 40, "FWPS_CLASSIFY_OUT0 size");
_Static_assert(offsetof(FWPS_CLASSIFY_OUT0, outContext) == 8, "FWPS_CLASSIFY_OUT0.outContext");
_Static_assert(offsetof(FWPS_CLASSIFY_OUT0, rights) == 24, "FWPS_CLASSIFY_OUT0.rights");
_Static_assert(offsetof(FWPS_CLASSIFY_OUT0, flags) == 28, "FWPS_CLASSIFY_OUT0.flags");

#define FWPS_RIGHT_ACTION_WRITE 0x00000001u
#define FWPS_CLASSIFY_OUT_FLAG_ABSORB 0x00000001u

typedef struct FWPS_FILTER0_ FWPS_FILTER0; /* read only through the engine */

typedef enum FWPS_CALLOUT_NOTIFY_TYPE_ {
    FWPS_CALLOUT_NOTIFY_ADD_FILTER = 0,
    FWPS_CALLOUT_NOTIFY_DELETE_FILTER = 1
} FWPS_CALLOUT_NOTIFY_TYPE;

typedef void(NTAPI *FWPS_CALLOUT_CLASSIFY_FN0)(const FWPS_INCOMING_VALUES0 *inFixedValues,
                                               const FWPS_INCOMING_METADATA_VALUES0 *inMetaValues, void *layerData,
                                               const FWPS_FILTER0 *filter, UINT64 flowContext,
                                               FWPS_CLASSIFY_OUT0 *classifyOut);
typedef NTSTATUS(NTAPI *FWPS_CALLOUT_NOTIFY_FN0)(FWPS_CALLOUT_NOTIFY_TYPE notifyType, const GUID *filterKey,
                                                 FWPS_FILTER0 *filter);
typedef void(NTAPI *FWPS_CALLOUT_FLOW_DELETE_NOTIFY_FN0)(UINT16 layerId, UINT32 calloutId, UINT64 flowContext);

typedef struct FWPS_CALLOUT0_ {
    GUID calloutKey;
    UINT32 flags;
    FWPS_CALLOUT_CLASSIFY_FN0 classifyFn;
    FWPS_CALLOUT_NOTIFY_FN0 notifyFn;
    FWPS_CALLOUT_FLOW_DELETE_NOTIFY_FN0 flowDeleteFn;
} FWPS_CALLOUT0;
_Static_assert(sizeof(FWPS_CALLOUT0) == 48 && offsetof(FWPS_CALLOUT0, classifyFn) == 24, "FWPS_CALLOUT0");

#define FWP_CALLOUT_FLAG_CONDITIONAL_ON_FLOW 0x00000001u

typedef enum FWPS_PACKET_INJECTION_STATE_ {
    FWPS_PACKET_NOT_INJECTED = 0,
    FWPS_PACKET_INJECTED_BY_SELF = 1,
    FWPS_PACKET_INJECTED_BY_OTHER = 2,
    FWPS_PACKET_PREVIOUSLY_INJECTED_BY_SELF = 3
} FWPS_PACKET_INJECTION_STATE;

#define FWPS_INJECTION_TYPE_TRANSPORT 0x00000004u

typedef struct FWPS_TRANSPORT_SEND_PARAMS0_ {
    UCHAR *remoteAddress;
    ULONG remoteScopeId;
    void *controlData;
    ULONG controlDataLength;
} FWPS_TRANSPORT_SEND_PARAMS0;
_Static_assert(sizeof(FWPS_TRANSPORT_SEND_PARAMS0) == 32, "FWPS_TRANSPORT_SEND_PARAMS0");

typedef void(NTAPI *FWPS_INJECT_COMPLETE0)(void *context, NET_BUFFER_LIST *netBufferList, BOOLEAN dispatchLevel);

/* ---- fwpmtypes.h: management objects (dynamic session, sublayer, filters) ---- */
typedef struct FWPM_DISPLAY_DATA0_ {
    PWSTR name;
    PWSTR description;
} FWPM_DISPLAY_DATA0;

typedef struct FWPM_SESSION0_ {
    GUID sessionKey;
    FWPM_DISPLAY_DATA0 displayData;
    UINT32 flags;
    UINT32 txnWaitTimeoutInMSec;
    ULONG processId;
    void *sid; /* SID * */
    PWSTR username;
    BOOLEAN kernelMode; /* BOOL in user mode; documented as BOOL, 4 bytes */
    UCHAR kernelModePad[3];
} FWPM_SESSION0;
_Static_assert(offsetof(FWPM_SESSION0, flags) == 32 && offsetof(FWPM_SESSION0, sid) == 48, "FWPM_SESSION0");
_Static_assert(sizeof(FWPM_SESSION0) == 72, "FWPM_SESSION0 size");
#define FWPM_SESSION_FLAG_DYNAMIC 0x00000001u

typedef struct FWPM_SUBLAYER0_ {
    GUID subLayerKey;
    FWPM_DISPLAY_DATA0 displayData;
    UINT32 flags;
    GUID *providerKey;
    FWP_BYTE_BLOB providerData;
    UINT16 weight;
} FWPM_SUBLAYER0;
_Static_assert(sizeof(FWPM_SUBLAYER0) == 72 && offsetof(FWPM_SUBLAYER0, weight) == 64, "FWPM_SUBLAYER0");

typedef struct FWPM_CALLOUT0_ {
    GUID calloutKey;
    FWPM_DISPLAY_DATA0 displayData;
    UINT32 flags;
    GUID *providerKey;
    FWP_BYTE_BLOB providerData;
    GUID applicableLayer;
    UINT32 calloutId;
} FWPM_CALLOUT0;
_Static_assert(sizeof(FWPM_CALLOUT0) == 88 && offsetof(FWPM_CALLOUT0, applicableLayer) == 64, "FWPM_CALLOUT0");

typedef struct FWPM_FILTER_CONDITION0_ {
    GUID fieldKey;
    FWP_MATCH_TYPE matchType;
    FWP_CONDITION_VALUE0 conditionValue;
} FWPM_FILTER_CONDITION0;
_Static_assert(sizeof(FWPM_FILTER_CONDITION0) == 40, "FWPM_FILTER_CONDITION0");

typedef struct FWPM_ACTION0_ {
    FWP_ACTION_TYPE type;
    union {
        GUID filterType;
        GUID calloutKey;
    };
} FWPM_ACTION0;
_Static_assert(sizeof(FWPM_ACTION0) == 20, "FWPM_ACTION0");

typedef struct FWPM_FILTER0_ {
    GUID filterKey;
    FWPM_DISPLAY_DATA0 displayData;
    UINT32 flags;
    GUID *providerKey;
    FWP_BYTE_BLOB providerData;
    GUID layerKey;
    GUID subLayerKey;
    FWP_VALUE0 weight;
    UINT32 numFilterConditions;
    FWPM_FILTER_CONDITION0 *filterCondition;
    FWPM_ACTION0 action;
    union {
        UINT64 rawContext;
        GUID providerContextKey;
    };
    GUID *reserved;
    UINT64 filterId;
    FWP_VALUE0 effectiveWeight;
} FWPM_FILTER0;
_Static_assert(offsetof(FWPM_FILTER0, layerKey) == 64, "FWPM_FILTER0.layerKey");
_Static_assert(offsetof(FWPM_FILTER0, weight) == 96, "FWPM_FILTER0.weight");
_Static_assert(offsetof(FWPM_FILTER0, filterCondition) == 120, "FWPM_FILTER0.filterCondition");
_Static_assert(offsetof(FWPM_FILTER0, action) == 128, "FWPM_FILTER0.action");
_Static_assert(offsetof(FWPM_FILTER0, rawContext) == 152, "FWPM_FILTER0.rawContext");
_Static_assert(offsetof(FWPM_FILTER0, filterId) == 176, "FWPM_FILTER0.filterId");
_Static_assert(sizeof(FWPM_FILTER0) == 200, "FWPM_FILTER0 size");

#define RPC_C_AUTHN_DEFAULT 0xFFFFFFFFu

/* ntifs.h (documented), needed for the process creation time */
NTKERNELAPI NTSTATUS NTAPI PsLookupProcessByProcessId(HANDLE ProcessId, PEPROCESS *Process);

NTSYSAPI NTSTATUS NTAPI ZwWaitForSingleObject(HANDLE Handle, BOOLEAN Alertable, PLARGE_INTEGER Timeout);

/* ntifs.h (documented), for the device's DACL: IoCreateDeviceSecure lives in
 * wdmsec.lib, a WDK static library, not in ntoskrnl's exports */
NTSYSAPI NTSTATUS NTAPI RtlCreateAcl(PACL Acl, ULONG AclLength, ULONG AclRevision);
NTSYSAPI NTSTATUS NTAPI RtlAddAccessAllowedAce(PACL Acl, ULONG AceRevision, ACCESS_MASK AccessMask, PSID Sid);
NTKERNELAPI NTSTATUS NTAPI ObOpenObjectByPointer(PVOID Object, ULONG HandleAttributes, PACCESS_STATE PassedAccessState,
                                                 ACCESS_MASK DesiredAccess, POBJECT_TYPE ObjectType,
                                                 KPROCESSOR_MODE AccessMode, PHANDLE Handle);
NTSYSAPI NTSTATUS NTAPI ZwSetSecurityObject(HANDLE Handle, SECURITY_INFORMATION SecurityInformation,
                                            PSECURITY_DESCRIPTOR SecurityDescriptor);

/* ntifs.h (documented), for the process-notify table: the image path of a
 * new process in the ALE layers' (NT device) form, and the name of the
 * system's own svchost.exe in the same form */
NTKERNELAPI NTSTATUS NTAPI SeLocateProcessImageName(PEPROCESS Process, PUNICODE_STRING *pImageFileName);
NTSYSAPI NTSTATUS NTAPI ZwQueryInformationFile(HANDLE FileHandle, PIO_STATUS_BLOCK IoStatusBlock, PVOID FileInformation,
                                              ULONG Length, FILE_INFORMATION_CLASS FileInformationClass);
typedef struct FILE_INTERNAL_INFORMATION_ {
    LARGE_INTEGER IndexNumber;
} SQFW_FILE_INTERNAL_INFORMATION;
NTKERNELAPI NTSTATUS NTAPI ObQueryNameString(PVOID Object, POBJECT_NAME_INFORMATION ObjectNameInfo, ULONG Length,
                                             PULONG ReturnLength);

/* ndis.sys (documented): moves a NET_BUFFER's data start back over headers
 * the stack already skipped, and forward again */
typedef int NDIS_STATUS;
#define NDIS_STATUS_SUCCESS 0
NDIS_STATUS NTAPI NdisRetreatNetBufferDataStart(NET_BUFFER *NetBuffer, ULONG DataOffsetDelta, ULONG DataBackFill,
                                                void *AllocateMdlHandler);
void NTAPI NdisAdvanceNetBufferDataStart(NET_BUFFER *NetBuffer, ULONG DataOffsetDelta, BOOLEAN FreeMdl,
                                         void *FreeMdlHandler);

/* ---- fwpkclnt.sys exports ---- */
NTSTATUS NTAPI FwpsCalloutRegister0(void *deviceObject, const FWPS_CALLOUT0 *callout, UINT32 *calloutId);
NTSTATUS NTAPI FwpsCalloutUnregisterById0(const UINT32 calloutId);
NTSTATUS NTAPI FwpsFlowAssociateContext0(UINT64 flowId, UINT16 layerId, UINT32 calloutId, UINT64 flowContext);
NTSTATUS NTAPI FwpsFlowRemoveContext0(UINT64 flowId, UINT16 layerId, UINT32 calloutId);
NTSTATUS NTAPI FwpsPendOperation0(HANDLE completionHandle, HANDLE *completionContext);
void NTAPI FwpsCompleteOperation0(HANDLE completionContext, NET_BUFFER_LIST *netBufferList);
NTSTATUS NTAPI FwpsInjectionHandleCreate0(ADDRESS_FAMILY addressFamily, UINT32 flags, HANDLE *injectionHandle);
NTSTATUS NTAPI FwpsInjectionHandleDestroy0(HANDLE injectionHandle);
FWPS_PACKET_INJECTION_STATE NTAPI FwpsQueryPacketInjectionState0(HANDLE injectionHandle,
                                                                const NET_BUFFER_LIST *netBufferList,
                                                                HANDLE *injectionContext);
NTSTATUS NTAPI FwpsAllocateCloneNetBufferList0(NET_BUFFER_LIST *originalNetBufferList, NDIS_HANDLE netBufferListPoolHandle,
                                               NDIS_HANDLE netBufferPoolHandle, ULONG allocateCloneFlags,
                                               NET_BUFFER_LIST **netBufferList);
void NTAPI FwpsFreeCloneNetBufferList0(NET_BUFFER_LIST *netBufferList, ULONG freeCloneFlags);
NTSTATUS NTAPI FwpsInjectTransportSendAsync0(HANDLE injectionHandle, HANDLE injectionContext, UINT64 endpointHandle,
                                             UINT32 flags, FWPS_TRANSPORT_SEND_PARAMS0 *sendArgs,
                                             ADDRESS_FAMILY addressFamily, COMPARTMENT_ID compartmentId,
                                             NET_BUFFER_LIST *netBufferList, FWPS_INJECT_COMPLETE0 completionFn,
                                             HANDLE completionContext);
NTSTATUS NTAPI FwpsInjectTransportReceiveAsync0(HANDLE injectionHandle, HANDLE injectionContext, void *reserved,
                                                UINT32 flags, ADDRESS_FAMILY addressFamily,
                                                COMPARTMENT_ID compartmentId, IF_INDEX interfaceIndex,
                                                IF_INDEX subInterfaceIndex, NET_BUFFER_LIST *netBufferList,
                                                FWPS_INJECT_COMPLETE0 completionFn, HANDLE completionContext);

NTSTATUS NTAPI FwpmEngineOpen0(const wchar_t *serverName, UINT32 authnService, void *authIdentity,
                               const FWPM_SESSION0 *session, HANDLE *engineHandle);
NTSTATUS NTAPI FwpmEngineClose0(HANDLE engineHandle);
NTSTATUS NTAPI FwpmTransactionBegin0(HANDLE engineHandle, UINT32 flags);
NTSTATUS NTAPI FwpmTransactionCommit0(HANDLE engineHandle);
NTSTATUS NTAPI FwpmTransactionAbort0(HANDLE engineHandle);
NTSTATUS NTAPI FwpmSubLayerAdd0(HANDLE engineHandle, const FWPM_SUBLAYER0 *subLayer, PSECURITY_DESCRIPTOR sd);
NTSTATUS NTAPI FwpmCalloutAdd0(HANDLE engineHandle, const FWPM_CALLOUT0 *callout, PSECURITY_DESCRIPTOR sd,
                               UINT32 *id);
NTSTATUS NTAPI FwpmFilterAdd0(HANDLE engineHandle, const FWPM_FILTER0 *filter, PSECURITY_DESCRIPTOR sd, UINT64 *id);
NTSTATUS NTAPI FwpmFilterDeleteById0(HANDLE engineHandle, UINT64 id);

/* fwpmk.h (documented): the base filtering engine's state and its changes */
typedef enum FWPM_SERVICE_STATE_ {
    FWPM_SERVICE_STOPPED = 0,
    FWPM_SERVICE_START_PENDING = 1,
    FWPM_SERVICE_STOP_PENDING = 2,
    FWPM_SERVICE_RUNNING = 3
} FWPM_SERVICE_STATE;
typedef void(NTAPI *FWPM_SERVICE_STATE_CHANGE_CALLBACK0)(void *context, FWPM_SERVICE_STATE newState);
FWPM_SERVICE_STATE NTAPI FwpmBfeStateGet0(void);
NTSTATUS NTAPI FwpmBfeStateSubscribeChanges0(void *deviceObject, FWPM_SERVICE_STATE_CHANGE_CALLBACK0 callback,
                                             void *context, HANDLE *changeHandle);
NTSTATUS NTAPI FwpmBfeStateUnsubscribeChanges0(HANDLE changeHandle);

#endif /* SQFW_USE_WDK */

/* FWPS_LAYER_* and FWPS_FIELD_* (declared here without the WDK, taken from
 * fwpsk.h with it), each value statically checked against the documentation */
#include "../fwps_fields.h"

#endif
