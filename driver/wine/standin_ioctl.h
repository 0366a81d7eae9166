/* Test-only: the interface between the Wine harness and the fwpkclnt.sys
 * stand-in. The stand-in answers these codes on the driver's own device
 * (it wraps the driver's IRP_MJ_DEVICE_CONTROL when the driver registers its
 * first callout) and passes every other code to the driver. */
#ifndef SQFW_STANDIN_IOCTL_H
#define SQFW_STANDIN_IOCTL_H
#include <stdint.h>

#define SQ_STANDIN_CTL(fn) ((0x8A5Fu << 16) | (0u << 14) | ((fn) << 2) | 0u)
#define IOCTL_STANDIN_COUNTS SQ_STANDIN_CTL(0xF00u)   /* out: sq_counts */
#define IOCTL_STANDIN_CLASSIFY SQ_STANDIN_CTL(0xF01u) /* in: sq_classify_in; out: sq_classify_out */
#define IOCTL_STANDIN_PROCESS SQ_STANDIN_CTL(0xF02u)  /* in: sq_process_in: the driver's process notify called */
#define IOCTL_STANDIN_BFE SQ_STANDIN_CTL(0xF03u)      /* in: u32 FWPM_SERVICE_STATE: BFE changes state */

/* A process create (create = 1) or exit, as PsSetCreateProcessNotifyRoutineEx
 * reports it; the image is what SeLocateProcessImageName answers. */
typedef struct sq_process_in {
    uint32_t create;
    uint32_t pid;
    uint32_t image_bytes, cmdline_bytes; /* UTF-16LE */
    uint16_t image[260];
    uint16_t cmdline[260];
} sq_process_in;

/* Registration-order index of each callout (the driver's C_* order). */
enum { SQ_C_CONNECT_V4 = 0, SQ_C_ACCEPT_V4 = 2, SQ_C_FLOW_V4 = 4, SQ_C_OUT_V4 = 6, SQ_C_IN_V4 = 8 };
enum { SQ_C_CONNECT_V6 = 1, SQ_C_ACCEPT_V6 = 3, SQ_C_FLOW_V6 = 5 };

/* sq_classify_in.layer_id: the ALE layers the request serves (FWPS_BUILTIN_LAYERS);
 * the transport layers go through IOCTL_STANDIN_PACKETS (standin_shaper_ioctl.h) */
#define SQ_LAYER_ACCEPT_V4 44u
#define SQ_LAYER_ACCEPT_V6 46u
#define SQ_LAYER_CONNECT_V4 48u
#define SQ_LAYER_CONNECT_V6 50u
#define SQ_LAYER_FLOW_V4 52u
#define SQ_LAYER_FLOW_V6 54u

typedef struct sq_classify_in {
    uint32_t callout;
    uint32_t layer_id;
    uint8_t protocol;
    uint8_t reauth;        /* FWP_CONDITION_FLAG_IS_REAUTHORIZE */
    uint8_t with_packet;   /* pass a stand-in NET_BUFFER_LIST as layerData */
    uint8_t no_write;      /* classify without FWPS_RIGHT_ACTION_WRITE */
    uint32_t local_addr, remote_addr; /* IPv4, host order as WFP gives them */
    uint16_t local_port, remote_port;
    uint32_t pid;
    uint32_t if_index, sub_if_index;
    uint32_t ip_header_size, transport_header_size;
    uint64_t flow_handle;  /* flow established: FWPS_METADATA_FIELD_FLOW_HANDLE */
    uint64_t flow_context; /* transport layers */
    uint32_t direction;    /* flow established: FWP_DIRECTION_* */
    uint32_t path_bytes;   /* UTF-16LE image path */
    uint16_t path[260];
    /* the _V6 layers: FWP_BYTE_ARRAY16_TYPE addresses, network order as WFP gives them;
     * local_addr/remote_addr are not used there */
    uint8_t local_addr6[16], remote_addr6[16];
    uint32_t scope_id;     /* not 0: FWPS_METADATA_FIELD_REMOTE_SCOPE_ID with this value */
    uint32_t pad;
} sq_classify_in;

typedef struct sq_classify_out {
    uint32_t action, rights, flags, reserved;
} sq_classify_out;

typedef struct sq_counts {
    uint64_t callouts_registered, callouts_unregistered, unregister_busy;
    uint64_t engine_open, engine_close, callouts_added, filters_added, sublayers_added;
    uint64_t flow_associated, flow_removed, flow_delete_calls;
    uint64_t pended, completed, completed_with_packet;
    uint64_t clones, clones_freed, inject_send, inject_receive;
    uint64_t injection_handles, injection_handles_destroyed;
    uint64_t pool_allocs, pool_frees;
    uint64_t cleanup_irps; /* IRP_MJ_CLEANUP requests Wine sent to the driver */
    uint32_t last_receive_if, last_receive_sub_if;
    uint32_t last_receive_offset_back; /* IP + transport bytes the last receive-injected clone was moved back */
    uint32_t last_send_remote;         /* first 4 bytes of the last send's remote address, network order */
    uint32_t create_irps, create_refused, close_irps; /* IRP_MJ_CREATE/CLOSE Wine sent the driver */
    uint32_t sd_sets;                  /* ZwSetSecurityObject calls by the driver */
    uint32_t sd_info;                  /* SECURITY_INFORMATION of the last one */
    uint32_t sd_len;                   /* its descriptor, self-relative, in sd */
    uint32_t sd_status;                /* what Wine answered */
    uint8_t sd[256];
    uint64_t process_notify_set, process_notify_removed, process_notify_calls;
    uint32_t svchost_name_bytes; /* what ObQueryNameString gave the driver for \SystemRoot's svchost.exe */
    uint32_t svchost_status;
    uint32_t svchost_name_supplied; /* Wine gave an empty name; the stand-in supplied the NT one */
    uint32_t svchost_open_status; /* the driver's ZwOpenFile of it */
    uint32_t svchost_root_supplied; /* Wine has no \\SystemRoot: opened through C:\\windows */
    uint32_t svchost_object_supplied; /* Wine cannot reference a file handle: the stand-in's object */
    uint16_t svchost_name[260];
    uint64_t filters_deleted, filter_delete_unknown; /* FwpmFilterDeleteById0: ids it gave out / others */
    uint64_t bfe_subscribed, bfe_unsubscribed, bfe_callbacks;
} sq_counts;

#endif
