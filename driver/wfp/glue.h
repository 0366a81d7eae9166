/* Shared state of the Windows glue. One spin lock serialises every call
 * into the portable core (the core itself never locks). */
#ifndef SQFW_GLUE_H
#define SQFW_GLUE_H

#define POOL_TAGGING 1
#include "include/wfp_decls.h"
#include <csq.h>

#include "../core/policy_format.h"
#include "../core/sqfw.h"
#include "sqfw_ioctl.h"

#define SQFW_TAG 0x77665153u /* "SQfw" in pool dumps */
#define SQFW_MAX_QUEUED_PER_CLASS 256u
#define SQFW_QUEUE_CLASSES 64u
/* Every class together: a deferred packet pins its absorbed original (up to
 * a 64 KB send each), so the per-class bound alone would let 64 busy classes
 * hold a gigabyte. Also the size of the record array taken at load. */
#define SQFW_MAX_QUEUED_TOTAL 4096u

/* A flow context: associated with the outbound and inbound transport
 * layers, so two references from WFP plus one per queued packet. */
typedef struct sqfw_flow_ctx {
    LIST_ENTRY link;
    UINT64 flow_id;
    LONG refs;
    UINT16 family;
    UINT8 associated; /* bit 0: outbound layer, bit 1: inbound layer */
    UINT8 pad;
} sqfw_flow_ctx;

/* A cloned packet waiting for its class's tokens. */
typedef struct sqfw_queued {
    LIST_ENTRY link;
    NET_BUFFER_LIST *clone;
    sqfw_flow_ctx *flow;
    UINT64 endpoint;
    UINT32 bytes;
    UINT32 compartment;
    UINT32 if_index, sub_if_index;
    UINT16 family;
    UINT8 outbound;
    UINT8 remote_addr[16];
    ULONG scope_id;
    UINT8 pooled; /* from the record array (a deferred packet), not a pend record's own allocation */
} sqfw_queued;

struct sqfw_pended; /* request.h */

typedef struct sqfw_glue {
    PDEVICE_OBJECT device;
    KSPIN_LOCK lock; /* engine, flows, queues, pend table */
    sqfw_engine *engine;
    void *engine_mem;
    void *policy_mem;
    HANDLE wfp_engine; /* dynamic session: filters vanish with it */
    KEVENT session_lock; /* the session's owner (BFE callback, policy push, unload), at PASSIVE_LEVEL */
    HANDLE bfe_subscription;
    volatile LONG bfe_failures; /* BFE came (back) and the session could not be set up */
    UINT32 callout_ids[10];
    UINT64 filter_ids[10];
    volatile LONG reauth_failures; /* policy changes whose re-authorisation WFP refused */
    HANDLE inject_v4, inject_v6;
    LIST_ENTRY flows;
    LIST_ENTRY queues[SQFW_QUEUE_CLASSES];
    UINT32 queued[SQFW_QUEUE_CLASSES];
    sqfw_queued *queue_records; /* SQFW_MAX_QUEUED_TOTAL, taken at load */
    LIST_ENTRY queue_free;      /* the records no deferred packet holds */
    struct sqfw_pended *pend[SQFW_MAX_PENDED]; /* armed pends, by core slot */
    LIST_ENTRY reauth_wait;  /* completed outbound pends until their re-authorisation classify */
    LIST_ENTRY inject_ready; /* permitted pended packets for the worker to inject */
    /* event channel */
    IO_CSQ csq;
    KSPIN_LOCK csq_lock;
    LIST_ENTRY pending_irps;
    /* worker */
    PETHREAD worker;
    KEVENT stop, kick;
    volatile LONG stopping;
    volatile LONG opened; /* the one open file object of the exclusive device */
    /* ETW provider (etw.c): its state, events written and refused, under lock */
    UINT32 etw_state;
    UINT64 etw_written, etw_failed;
} sqfw_glue;

enum { SQFW_ETW_OFF = 0, SQFW_ETW_ON = 1, SQFW_ETW_ABSENT = 2 /* no Etw* routines */, SQFW_ETW_FAILED = 3 };

extern sqfw_glue g_sqfw;

UINT64 sqfw_now_ns(void);

/* callouts.c */
NTSTATUS sqfw_callouts_register(PDEVICE_OBJECT device);
NTSTATUS sqfw_callouts_add_filters(void); /* the caller holds session_lock */
void sqfw_callouts_remove_filters(void);  /* the caller holds session_lock */
void sqfw_callouts_detach(void);
void sqfw_callouts_unregister(void);
NTSTATUS sqfw_callouts_reauthorize(void);

/* shaper.c */
void sqfw_shaper_init(void);
NTSTATUS sqfw_shaper_start(void);
void sqfw_shaper_stop_worker(void);
void sqfw_shaper_release(void);
void sqfw_pends_release(void);
void sqfw_free_queued(sqfw_queued *q);
BOOLEAN sqfw_shaper_enqueue(sqfw_queued *q, UINT32 class_id);
void sqfw_shaper_drop_flow(sqfw_flow_ctx *flow);
void sqfw_flow_ctx_release(sqfw_flow_ctx *ctx);

/* queue_records.c */
NTSTATUS sqfw_queue_records_alloc(void);
void sqfw_queue_records_free(void);
sqfw_queued *sqfw_queue_record_take(void);
void sqfw_queue_record_give(sqfw_queued *q);

/* bfe.c */
NTSTATUS sqfw_bfe_start(PDEVICE_OBJECT device);
void sqfw_bfe_stop(void);
void sqfw_session_lock(void);
void sqfw_session_unlock(void);

/* bootfilters.c */
NTSTATUS sqfw_boot_filters_set(UINT32 enable, sqfw_boot_filters_out *out); /* PASSIVE_LEVEL */

/* processes.c */
NTSTATUS sqfw_processes_start(void);
void sqfw_processes_stop(void);

/* etw.c: never fails the load; without ETW the driver runs untraced */
void sqfw_etw_start(void); /* after the engine exists */
void sqfw_etw_stop(void);  /* before the engine goes */

/* events.c */
void sqfw_events_init(void);
NTSTATUS sqfw_events_wait(PIRP irp); /* the caller has checked the output holds one event */
void sqfw_events_deliver(void);
void sqfw_events_cancel_all(void);
void sqfw_events_cancel_file(PFILE_OBJECT file);

#endif
