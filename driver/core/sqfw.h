/* Public API of the SieveQ firewall core: the one surface used by the WFP
 * glue (driver/wfp), the Linux shared library (libsieveqfw.so, DllImport'ed
 * by the agent) and the tests.
 *
 * Concurrency contract: the core never locks. Every call on one engine must
 * be serialised by the caller (a spin lock in the driver, a mutex in the
 * shared library). Time is always passed in as nanoseconds from any
 * monotonic origin; the core never reads a clock.
 *
 * Every struct here is part of the shared-library ABI used from C#: fixed
 * width fields only, natural alignment, no bitfields. */
#ifndef SQFW_H
#define SQFW_H

#include "sqfw_base.h"

#define SQFW_ABI_VERSION 1u

/* ---- status and parse error codes ---- */
typedef enum sqfw_status {
    SQFW_OK = 0,
    SQFW_E_TOO_SHORT = 1,
    SQFW_E_TOO_LONG = 2,
    SQFW_E_MAGIC = 3,
    SQFW_E_VERSION = 4,
    SQFW_E_HEADER = 5,
    SQFW_E_LENGTH = 6,
    SQFW_E_CHECKSUM = 7,
    SQFW_E_RESERVED = 8,
    SQFW_E_SECTION_TABLE = 9,
    SQFW_E_SECTION_BOUNDS = 10,
    SQFW_E_SECTION_ALIGN = 11,
    SQFW_E_SECTION_OVERLAP = 12,
    SQFW_E_SECTION_DUPLICATE = 13,
    SQFW_E_SECTION_UNKNOWN = 14,
    SQFW_E_SECTION_MISSING = 15,
    SQFW_E_SECTION_SIZE = 16,
    SQFW_E_GAP = 17,
    SQFW_E_COUNT = 18,
    SQFW_E_STRING_REF = 19,
    SQFW_E_DUPLICATE = 20,
    SQFW_E_ENUM = 21,
    SQFW_E_PREFIX = 22,
    SQFW_E_HOST_BITS = 23,
    SQFW_E_PORTS = 24,
    SQFW_E_CLASS_REF = 25,
    SQFW_E_IDENTITY_REF = 26,
    SQFW_E_RATE = 27,
    SQFW_E_LEVELS = 28,
    SQFW_E_SETTINGS = 29,
    SQFW_E_HASH = 30,
    /* not parse errors */
    SQFW_E_ARG = 40,
    SQFW_E_NOMEM = 41,
    SQFW_E_NO_POLICY = 42,
    SQFW_E_FULL = 43,
    SQFW_E_NOT_FOUND = 44,
    SQFW_E_LIMIT = 45
} sqfw_status;

SQFW_API const char *sqfw_status_name(int status);

/* ---- verdicts and reasons ---- */
enum sqfw_verdict { SQFW_ALLOW = 1, SQFW_BLOCK = 2, SQFW_PEND = 3, SQFW_DEFER = 4 };

enum sqfw_reason {
    SQFW_R_RULE = 1,             /* an allow rule matched (rule_id set) */
    SQFW_R_NO_RULE = 2,          /* identity known, no rule covers the remote */
    SQFW_R_UNKNOWN_APP = 3,      /* no identity names this process */
    SQFW_R_NEEDS_HASH = 4,       /* identity needs the image hash, not yet attested */
    SQFW_R_HASH_MISMATCH = 5,    /* attested hash differs from the policy */
    SQFW_R_USER_MISMATCH = 6,    /* user SID differs from the identity's */
    SQFW_R_LOOPBACK = 7,         /* loopback allowed by setting */
    SQFW_R_DNS_CLIENT = 8,       /* DNS client service to port 53, allowed by setting */
    SQFW_R_LEVEL = 9,            /* class not admitted at the active QGuard level */
    SQFW_R_CLASS_RATE = 10,      /* class connection bucket empty */
    SQFW_R_APP_RATE = 11,        /* application connection bucket empty */
    SQFW_R_SYN_SOURCE = 12,      /* per-source SYN bucket empty */
    SQFW_R_SYN_UNPROVEN = 13,    /* aggregate bucket for unproven sources empty */
    SQFW_R_PEND_FULL = 14,       /* too many pended; fail-open/closed applied */
    SQFW_R_PEND_TIMEOUT = 15,    /* agent did not answer in time */
    SQFW_R_NO_POLICY = 16,       /* no policy loaded: fail closed */
    SQFW_R_SHAPED = 17,          /* packet over its class rate: queue it */
    SQFW_R_FLOW_UNKNOWN = 18,    /* packet for a flow the table does not hold */
    SQFW_R_PASS = 19             /* packet within its class rate */
};

/* Decision flags */
#define SQFW_DF_AUDIT 0x1u   /* verdict would have been BLOCK; audit mode allowed it */
#define SQFW_DF_EXPLAIN 0x2u /* produced by explain: nothing was charged or logged */

#define SQFW_DIR_OUTBOUND 1u
#define SQFW_DIR_INBOUND 2u

/* Request flags */
#define SQFW_RF_LOOPBACK 0x1u /* WFP said FWP_CONDITION_FLAG_IS_LOOPBACK */
#define SQFW_RF_REAUTH 0x2u   /* re-authorisation after a completed pend */

/* One connection attempt as the ALE layers see it. Strings are UTF-8, not
 * NUL-terminated, and may be NULL when their length is 0. */
typedef struct sqfw_request {
    uint64_t process_key;  /* pid + process creation time, unique per process lifetime */
    const uint8_t *path;   /* NT image path */
    const uint8_t *service; /* svchost service name when the glue knows it */
    const uint8_t *user;   /* textual user SID */
    uint32_t path_len;
    uint32_t service_len;
    uint32_t user_len;
    uint32_t pid;
    uint8_t direction;     /* SQFW_DIR_OUTBOUND / SQFW_DIR_INBOUND */
    uint8_t protocol;      /* IP protocol number */
    uint8_t family;        /* 4 or 6 */
    uint8_t flags;         /* SQFW_RF_* */
    uint16_t local_port;
    uint16_t remote_port;
    uint8_t local_addr[16];
    uint8_t remote_addr[16];
} sqfw_request;

typedef struct sqfw_decision {
    uint32_t verdict;      /* sqfw_verdict */
    uint32_t reason;       /* sqfw_reason */
    uint32_t rule_id;      /* deciding rule, 0 when none */
    uint32_t identity_id;  /* 0 when no identity */
    uint32_t class_id;     /* traffic class the connection belongs to */
    uint32_t flags;        /* SQFW_DF_* */
    uint32_t level;        /* active QGuard level */
    uint32_t pend_slot;    /* for SQFW_PEND: slot to complete later */
    uint64_t wait_ns;      /* for SQFW_DEFER: time until the class bucket conforms */
} sqfw_decision;

/* Engine sizing, fixed at creation so that nothing grows later. */
typedef struct sqfw_limits {
    uint32_t max_flows;
    uint32_t max_syn_slots;    /* policy may ask for up to this many */
    uint32_t max_attest;       /* process -> image hash answers kept */
    uint32_t max_services;     /* svchost process -> service name bindings */
    uint32_t max_events;       /* event ring capacity */
    uint32_t max_processes;    /* process-notify table; 0: none (the shared library has no notify) */
    uint64_t seed;             /* secret, per boot: keys the SYN table hash */
} sqfw_limits;

typedef struct sqfw_stats {
    uint64_t policy_serial;
    uint64_t authorized;
    uint64_t allowed;
    uint64_t blocked;
    uint64_t pended;
    uint64_t pend_timeouts;
    uint64_t pend_full;
    uint64_t audited;
    uint64_t syn_dropped;
    uint64_t rate_limited;
    uint64_t level_dropped;
    uint64_t packets_passed;
    uint64_t packets_deferred;
    uint64_t packets_dropped;
    uint64_t flows_created;
    uint64_t flows_failed;
    uint64_t events_dropped;
    uint32_t flows_active;
    uint32_t pended_now;
    uint32_t level;
    uint32_t level_count;
    uint32_t policy_rules;
    uint32_t policy_identities;
    /* process-notify table */
    uint64_t processes_evicted; /* a full set gave up a process that hosts no service */
    uint64_t processes_refused; /* a set full of services: the newcomer is attributed by path only */
    uint32_t processes_tracked;
    uint32_t processes_services; /* single-service svchost instances among them */
    uint64_t events_suppressed;  /* connection-log events over SQFW_CONN_LOG_RATE */
} sqfw_stats;

enum sqfw_event_type {
    SQFW_EV_BLOCKED = 1,      /* a connection was blocked */
    SQFW_EV_NEW_IDENTITY = 2, /* agent: hash this image, then sqfw_attest */
    SQFW_EV_AUDIT = 3,        /* audit mode allowed what enforce would block */
    SQFW_EV_LEVEL = 4,        /* QGuard level changed */
    SQFW_EV_POLICY = 5,       /* a policy was installed */
    SQFW_EV_ALLOWED = 6,      /* a connection was allowed (connection log, within its budget) */
    SQFW_EV_RATE = 7          /* a connection dropped by a rate, level or SYN limit (reason says which; budgeted) */
};

/* The connection log (ALLOWED and RATE events) shares one budget per
 * engine, so a flood cannot fill the ring with it; what is over the budget
 * is counted in events_suppressed. BLOCKED, AUDIT and NEW_IDENTITY events
 * are not budgeted. */
#define SQFW_CONN_LOG_RATE 1000u /* events per second */
#define SQFW_CONN_LOG_BURST 1000u

#define SQFW_EVENT_PATH_MAX 256u
#define SQFW_EVENT_USER_MAX 184u /* SQFW_MAX_USER: the longest textual SID */
typedef struct sqfw_event {
    uint32_t type;
    uint32_t reason;
    uint64_t time_ns;
    uint64_t process_key;
    uint32_t pid;
    uint32_t rule_id;
    uint32_t identity_id;
    uint32_t value;        /* level for LEVEL, pend slot for NEW_IDENTITY */
    uint8_t direction;
    uint8_t protocol;
    uint8_t family;
    uint8_t path_truncated;
    uint16_t remote_port;
    uint16_t path_len;
    uint8_t remote_addr[16];
    uint8_t path[SQFW_EVENT_PATH_MAX];
    uint8_t local_addr[16];
    uint16_t local_port;
    uint8_t user_len;
    uint8_t reserved;
    uint32_t class_id;
    uint8_t user[SQFW_EVENT_USER_MAX]; /* textual SID, UTF-8 */
    /* NEW_IDENTITY: the image file the process mapped (volume serial, file
     * id), from the create notify; 0 when unknown. The agent hashes the file
     * at the path only if it is this file. */
    uint32_t image_volume;
    uint32_t reserved2;
    uint64_t image_file_id;
} sqfw_event;

/* ---- policy validation (no engine needed) ---- */
/* Validates the whole blob. On error returns the code and sets *err_offset
 * to the byte offset of the offending field. */
SQFW_API int sqfw_policy_check(const uint8_t *blob, size_t len, uint32_t *err_offset);

/* ---- engine in caller-provided memory (the driver's way) ---- */
typedef struct sqfw_engine sqfw_engine;
typedef struct sqfw_policy sqfw_policy;

SQFW_API size_t sqfw_engine_size(const sqfw_limits *limits);
SQFW_API int sqfw_engine_init(void *mem, size_t size, const sqfw_limits *limits, sqfw_engine **out);

/* Compiling a policy: validate, ask for the arena size, build into it.
 * The compiled policy points into the blob only during compile; afterwards
 * the blob may be freed. */
SQFW_API int sqfw_policy_arena_size(const uint8_t *blob, size_t len, size_t *arena_size, uint32_t *err_offset);
SQFW_API int sqfw_policy_compile(const uint8_t *blob, size_t len, void *arena, size_t arena_size, sqfw_policy **out,
                                 uint32_t *err_offset);

/* Installs a compiled policy; returns the previous one (the caller frees
 * its arena once no classify can still be using it). */
SQFW_API int sqfw_engine_install(sqfw_engine *e, sqfw_policy *p, uint64_t now_ns, sqfw_policy **previous);
/* Detaches the current policy (for unload). */
SQFW_API sqfw_policy *sqfw_engine_detach(sqfw_engine *e);

/* ALE auth connect / recv-accept. Charges buckets, counts, emits events. */
SQFW_API int sqfw_authorize(sqfw_engine *e, const sqfw_request *r, uint64_t now_ns, sqfw_decision *d);
/* Same decision, without side effects: which rule decides this connection. */
SQFW_API int sqfw_explain(sqfw_engine *e, const sqfw_request *r, uint64_t now_ns, sqfw_decision *d);

/* ALE flow established: creates the flow context (refcount 1). A completed
 * inbound TCP handshake also marks the source as proven in the SYN table. */
SQFW_API int sqfw_flow_established(sqfw_engine *e, uint64_t flow_id, const sqfw_request *r, uint64_t now_ns);
SQFW_API int sqfw_flow_ref(sqfw_engine *e, uint64_t flow_id);
/* Drops one reference; the flow slot is recycled at zero. */
SQFW_API int sqfw_flow_unref(sqfw_engine *e, uint64_t flow_id);
SQFW_API int sqfw_flow_lookup(sqfw_engine *e, uint64_t flow_id, uint32_t *identity_id, uint32_t *class_id);

/* Per packet on an established flow: ALLOW, DEFER (queue, retry after
 * wait_ns) or BLOCK (class not admitted at this level). */
SQFW_API int sqfw_packet(sqfw_engine *e, uint64_t flow_id, uint32_t bytes, uint64_t now_ns, sqfw_decision *d);
/* The same decision for a packet that was deferred and queued, asking again:
 * not a new arrival, so QGuard's demand estimate and the deferral count do
 * not grow with every retry. */
SQFW_API int sqfw_packet_retry(sqfw_engine *e, uint64_t flow_id, uint32_t bytes, uint64_t now_ns, sqfw_decision *d);
/* A new packet of a class whose queue (the caller's) is not empty: it goes
 * behind the packets that waited first, so it is deferred without taking
 * tokens, even when there are some (they are the queue's). Counted as an
 * arrival and a deferral, as sqfw_packet counts a packet it defers; ALLOW
 * in audit mode, BLOCK when the level does not admit the class. */
SQFW_API int sqfw_packet_behind(sqfw_engine *e, uint64_t flow_id, uint32_t bytes, uint64_t now_ns, sqfw_decision *d);
/* A DEFER the caller could not queue (its class queue full, no memory for
 * the queued copy): the packet is dropped, so it is counted as dropped, not
 * as deferred. Call it once, right after the sqfw_packet that deferred it. */
SQFW_API int sqfw_packet_unqueued(sqfw_engine *e);

/* Pending: sqfw_authorize returns SQFW_PEND with a slot (bounded by the
 * policy's max_pended); the glue pends the ALE operation under that slot.
 * The agent answers with the image hash; expired pends get the policy's
 * time-out verdict. */
SQFW_API int sqfw_attest(sqfw_engine *e, uint64_t process_key, const uint8_t sha256[32], uint64_t now_ns);
/* Next pend that can be completed (answered or expired). Returns 1 when one
 * was taken, with its slot and, for expired ones, the time-out verdict. */
SQFW_API int sqfw_pend_take_ready(sqfw_engine *e, uint64_t now_ns, uint32_t *slot, uint32_t *verdict_on_timeout,
                                  uint32_t *expired);
/* A PEND verdict's slot is reserved, not yet completable: the glue pends the
 * operation, stores its completion handle, then arms the slot (an answer
 * that came in between is kept), or aborts it when pending failed. Until
 * armed, sqfw_pend_take_ready never returns it. */
SQFW_API int sqfw_pend_arm(sqfw_engine *e, uint32_t slot);
SQFW_API int sqfw_pend_abort(sqfw_engine *e, uint32_t slot);
SQFW_API int sqfw_service_bind(sqfw_engine *e, uint64_t process_key, const uint8_t *name, uint32_t name_len);

/* ---- processes, from the kernel's process-create/exit notify ---- */
#define SQFW_SVCHOST_PATH_MAX 512u /* UTF-16 units */
#define SQFW_SERVICE_NAME_MAX 63u  /* bytes: longer names are not attributed */

/* One process as the create notify saw it. Paths are UTF-16, in the same
 * (NT device) form as the ALE layers' process path. */
typedef struct sqfw_process_info {
    uint64_t process_key;
    uint64_t image_file_id; /* the mapped image's file id; 0 when unknown */
    const uint16_t *image;
    const uint16_t *cmdline;
    uint32_t image_chars;
    uint32_t cmdline_chars;
    uint32_t image_volume;  /* the mapped image's volume serial */
    uint32_t pid;
} sqfw_process_info;

/* The system's own svchost.exe, resolved by the glue at start: only a
 * process of exactly this image has its "-s NAME" believed. */
SQFW_API int sqfw_set_svchost_path(sqfw_engine *e, const uint16_t *path, uint32_t chars);
/* Records the process; a single-service svchost gets its service name, so
 * its connections match SERVICE identities without the agent's help. */
SQFW_API int sqfw_process_created(sqfw_engine *e, const sqfw_process_info *pi, uint64_t now_ns);
/* Forgets the process and every fact kept about it (service, attestation). */
SQFW_API int sqfw_process_exited(sqfw_engine *e, uint64_t process_key);
/* The service a split svchost instance hosts: the name after its single
 * "-s" (or "/s") argument, ASCII, 1..SQFW_SERVICE_NAME_MAX bytes. Returns
 * the length written to out (which holds SQFW_SERVICE_NAME_MAX bytes), 0
 * when there is none, several, or a malformed one. */
SQFW_API uint32_t sqfw_svchost_service(const uint16_t *cmdline, uint32_t chars, uint8_t *out);
/* The mapped image of a tracked process (the agent hashes this file, not
 * whatever is at the path now). Returns 1 when known. */
SQFW_API int sqfw_process_image(const sqfw_engine *e, uint64_t process_key, uint32_t *volume, uint64_t *file_id);

/* QGuard */
SQFW_API int sqfw_set_level(sqfw_engine *e, uint32_t level, uint64_t now_ns);
/* Periodic (e.g. every 100 ms): refreshes class demand estimates and the
 * weighted max-min allocation under the active level's caps. */
SQFW_API void sqfw_tick(sqfw_engine *e, uint64_t now_ns);

SQFW_API void sqfw_get_stats(const sqfw_engine *e, sqfw_stats *s);
SQFW_API int sqfw_next_event(sqfw_engine *e, sqfw_event *ev);
/* A second consumer of every event as it is recorded (the driver's ETW
 * provider), called under the caller's serialisation, also when the ring is
 * full. The glue sets it only while a session listens, so the packet path
 * pays one branch otherwise. NULL removes it. */
typedef void (*sqfw_event_tap)(void *ctx, const sqfw_event *ev);
SQFW_API void sqfw_set_event_tap(sqfw_engine *e, sqfw_event_tap tap, void *ctx);

/* ---- user-mode convenience (shared library): malloc-backed engine with
 * its own mutex; compiled only outside the kernel ---- */
#ifndef SQFW_KERNEL
typedef struct sqfw_host sqfw_host;
SQFW_API uint32_t sqfw_abi_version(void);
SQFW_API sqfw_host *sqfw_host_open(const sqfw_limits *limits);
SQFW_API void sqfw_host_close(sqfw_host *h);
SQFW_API int sqfw_host_set_policy(sqfw_host *h, const uint8_t *blob, size_t len, uint64_t now_ns, uint32_t *err_offset);
SQFW_API sqfw_engine *sqfw_host_engine(sqfw_host *h);
SQFW_API int sqfw_host_authorize(sqfw_host *h, const sqfw_request *r, uint64_t now_ns, sqfw_decision *d);
SQFW_API int sqfw_host_explain(sqfw_host *h, const sqfw_request *r, uint64_t now_ns, sqfw_decision *d);
SQFW_API int sqfw_host_flow_established(sqfw_host *h, uint64_t flow_id, const sqfw_request *r, uint64_t now_ns);
SQFW_API int sqfw_host_flow_deleted(sqfw_host *h, uint64_t flow_id);
SQFW_API int sqfw_host_packet(sqfw_host *h, uint64_t flow_id, uint32_t bytes, uint64_t now_ns, sqfw_decision *d);
SQFW_API int sqfw_host_attest(sqfw_host *h, uint64_t process_key, const uint8_t *sha256, uint64_t now_ns);
SQFW_API int sqfw_host_set_level(sqfw_host *h, uint32_t level, uint64_t now_ns);
SQFW_API void sqfw_host_tick(sqfw_host *h, uint64_t now_ns);
SQFW_API void sqfw_host_stats(sqfw_host *h, sqfw_stats *s);
SQFW_API int sqfw_host_next_event(sqfw_host *h, sqfw_event *ev);
SQFW_API int sqfw_host_pend_take_ready(sqfw_host *h, uint64_t now_ns, uint32_t *slot, uint32_t *verdict_on_timeout,
                                       uint32_t *expired);
SQFW_API int sqfw_host_service_bind(sqfw_host *h, uint64_t process_key, const uint8_t *name, uint32_t name_len);
#endif

#endif
