/* The part of the WFP management API that only the boot-time filters use
 * (persistent provider and sublayer, boot-time filters, removal by key), from
 * Microsoft's documentation of fwpmtypes.h / fwpmk.h, with the same static
 * layout checks as wfp_decls.h. */
#ifndef SQFW_WFP_BOOT_DECLS_H
#define SQFW_WFP_BOOT_DECLS_H

#include "wfp_decls.h"

#ifndef SQFW_USE_WDK
typedef struct FWPM_PROVIDER0_ {
    GUID providerKey;
    FWPM_DISPLAY_DATA0 displayData;
    UINT32 flags;
    FWP_BYTE_BLOB providerData;
    PWSTR serviceName;
} FWPM_PROVIDER0;
_Static_assert(offsetof(FWPM_PROVIDER0, flags) == 32 && offsetof(FWPM_PROVIDER0, providerData) == 40 &&
                   offsetof(FWPM_PROVIDER0, serviceName) == 56 && sizeof(FWPM_PROVIDER0) == 64,
               "FWPM_PROVIDER0");

#define FWPM_PROVIDER_FLAG_PERSISTENT 0x00000001u
#define FWPM_SUBLAYER_FLAG_PERSISTENT 0x00000001u
#define FWPM_FILTER_FLAG_PERSISTENT 0x00000001u
#define FWPM_FILTER_FLAG_BOOTTIME 0x00000002u

/* fwptypes.h: FWP_MATCH_TYPE beyond FWP_MATCH_EQUAL */
#define SQFW_FWP_MATCH_FLAGS_ALL_SET 6

NTSTATUS NTAPI FwpmProviderAdd0(HANDLE engineHandle, const FWPM_PROVIDER0 *provider, PSECURITY_DESCRIPTOR sd);
NTSTATUS NTAPI FwpmProviderDeleteByKey0(HANDLE engineHandle, const GUID *key);
NTSTATUS NTAPI FwpmSubLayerDeleteByKey0(HANDLE engineHandle, const GUID *key);
NTSTATUS NTAPI FwpmFilterDeleteByKey0(HANDLE engineHandle, const GUID *key);
#else
#define SQFW_FWP_MATCH_FLAGS_ALL_SET FWP_MATCH_FLAGS_ALL_SET
#endif

/* FWPM_CONDITION_* field keys (fwpmu.h / fwpmk.h) */
#define SQFW_GUID_CONDITION_FLAGS                                                                                      \
    {                                                                                                                  \
        0x632ce23b, 0x5167, 0x435c, { 0x86, 0xd7, 0xe9, 0x03, 0x68, 0x4a, 0xa8, 0x0c }                                 \
    }
#define SQFW_GUID_CONDITION_IP_PROTOCOL                                                                                \
    {                                                                                                                  \
        0x3971ef2b, 0x623e, 0x4f9a, { 0x8c, 0xb1, 0x6e, 0x79, 0xb8, 0x06, 0xb9, 0xa7 }                                 \
    }
#define SQFW_GUID_CONDITION_IP_LOCAL_PORT                                                                              \
    {                                                                                                                  \
        0x0c1ba1af, 0x5765, 0x453f, { 0xaf, 0x22, 0xa8, 0xf7, 0x91, 0xac, 0x77, 0x5b }                                 \
    }
#define SQFW_GUID_CONDITION_IP_REMOTE_PORT                                                                             \
    {                                                                                                                  \
        0xc35a604d, 0xd22b, 0x4e1a, { 0x91, 0xb4, 0x68, 0xf6, 0x74, 0xee, 0x67, 0x4b }                                 \
    }

#endif
