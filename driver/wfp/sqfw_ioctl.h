/* Device interface between the agent and sieveqfw.sys. Shared with the C#
 * WindowsDriverBridge, which mirrors these codes and layouts; the payload
 * structures are the core's (sqfw_stats, sqfw_event, sqfw_decision). */
#ifndef SQFW_IOCTL_H
#define SQFW_IOCTL_H

#define SQFW_DEVICE_NAME L"\\Device\\SieveQFw"
#define SQFW_DOS_NAME L"\\DosDevices\\SieveQFw" /* \\.\SieveQFw from user mode */

#define SQFW_DEVICE_TYPE 0x8A5Fu
#define SQFW_CTL(fn, access) ((SQFW_DEVICE_TYPE << 16) | ((access) << 14) | ((fn) << 2) | 0u /* METHOD_BUFFERED */)
#define SQFW_READ 1u  /* FILE_READ_ACCESS */
#define SQFW_WRITE 2u /* FILE_WRITE_ACCESS */

#define IOCTL_SQFW_GET_VERSION SQFW_CTL(0x800u, SQFW_READ)          /* out: sqfw_version_info */
#define IOCTL_SQFW_SET_POLICY SQFW_CTL(0x801u, SQFW_WRITE)          /* in: policy blob; out: u32 status, u32 offset */
#define IOCTL_SQFW_GET_STATS SQFW_CTL(0x802u, SQFW_READ)            /* out: sqfw_stats */
#define IOCTL_SQFW_SET_LEVEL SQFW_CTL(0x803u, SQFW_WRITE)           /* in: u32 level */
#define IOCTL_SQFW_WAIT_EVENTS SQFW_CTL(0x804u, SQFW_READ)          /* out: sqfw_event[n]; pends until one exists */
#define IOCTL_SQFW_ATTEST SQFW_CTL(0x805u, SQFW_WRITE)              /* in: sqfw_attest_in */
#define IOCTL_SQFW_BIND_SERVICE SQFW_CTL(0x806u, SQFW_WRITE)        /* in: sqfw_bind_in */
#define IOCTL_SQFW_HELLO SQFW_CTL(0x807u, SQFW_READ)                /* in: sqfw_hello_in; out: sqfw_version_info */
#define IOCTL_SQFW_SET_BOOT_FILTERS SQFW_CTL(0x808u, SQFW_WRITE)    /* in: sqfw_boot_filters_in; out: sqfw_boot_filters_out */

/* The device interface (codes, layouts, handshake) this header describes.
 * A handle must say IOCTL_SQFW_HELLO with this number before any request
 * other than GET_VERSION and HELLO is served on it; a different number is
 * refused with STATUS_REVISION_MISMATCH, so an agent never reads structures
 * of another layout. Bump on any change to an existing code or layout. A
 * code added beside them (SET_BOOT_FILTERS) is not such a change: an agent
 * that does not know it never sends it, and a driver that does not know it
 * answers STATUS_INVALID_DEVICE_REQUEST, which tells the agent so. */
#define SQFW_INTERFACE_VERSION 3u
#define SQFW_HELLO_MAGIC 0x51465753u /* "SWFQ" little-endian: not a length a confused caller would send */

/* What the driver accepts, checked before it allocates anything: the
 * policy blob (METHOD_BUFFERED already copied it into the system buffer
 * once) and the compiled arena, both NonPagedPoolNx. 100 000 rules over
 * 1 000 identities are a 4.1 MB blob and a 10.5 MB arena. */
#define SQFW_DRIVER_MAX_POLICY (8u * 1024u * 1024u)
#define SQFW_DRIVER_MAX_ARENA (16u * 1024u * 1024u)

typedef struct sqfw_version_info {
    uint32_t abi_version;    /* SQFW_ABI_VERSION */
    uint32_t format_version; /* SQFW_FORMAT_VERSION */
    uint32_t driver_major, driver_minor;
    uint32_t interface_version; /* SQFW_INTERFACE_VERSION */
} sqfw_version_info;

typedef struct sqfw_hello_in {
    uint32_t magic;             /* SQFW_HELLO_MAGIC */
    uint32_t interface_version; /* the caller's SQFW_INTERFACE_VERSION */
} sqfw_hello_in;

typedef struct sqfw_attest_in {
    uint64_t process_key;
    uint8_t sha256[32];
} sqfw_attest_in;

typedef struct sqfw_bind_in {
    uint64_t process_key;
    uint32_t name_len;
    uint32_t reserved;
    uint8_t name[64]; /* UTF-8 service name */
} sqfw_bind_in;

typedef struct sqfw_set_policy_out {
    uint32_t status; /* sqfw_status */
    uint32_t err_offset;
} sqfw_set_policy_out;

/* IOCTL_SQFW_SET_BOOT_FILTERS: the input is core/boot_rules.h's
 * sqfw_boot_filters_in (magic, enable 0/1, reserved zero; any other length
 * or value is STATUS_INVALID_PARAMETER). The request itself completes with
 * success and its outcome is here, as SET_POLICY's is. */
#define SQFW_BOOT_UNCHANGED 0xFFFFFFFFu
typedef struct sqfw_boot_filters_out {
    uint32_t status;  /* NTSTATUS of the change: 0 done; 0xC00000A3 (STATUS_DEVICE_NOT_READY) BFE is not running;
                         else what WFP answered, and the transaction was aborted */
    uint32_t enabled; /* what was asked */
    uint32_t filters; /* our boot-time filters in BFE's store now (all of them or 0); SQFW_BOOT_UNCHANGED after a
                         failure: BFE kept what it had */
    uint32_t reserved;
} sqfw_boot_filters_out;

/* Process key, computed the same way by the driver and the agent:
 * pid XOR (creation time in 100 ns units * 0x9E3779B97F4A7C15). The agent
 * gets the creation time from GetProcessTimes. */
#define SQFW_PROCESS_KEY(pid, create_time) \
    ((uint64_t)(pid) ^ ((uint64_t)(create_time) * 0x9E3779B97F4A7C15ull))

#endif
