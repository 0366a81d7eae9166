/* The engine's fixed-size state. Private to engine*.c; the glue and the
 * shared library see only the opaque sqfw_engine. */
#ifndef SQFW_ENGINE_STATE_H
#define SQFW_ENGINE_STATE_H

#include "bucket.h"
#include "event_ring.h"
#include "flow_table.h"
#include "policy.h"
#include "proc_cache.h"
#include "proc_table.h"
#include "syn_table.h"

typedef struct sq_pend {
    uint64_t process_key;
    uint64_t deadline_ns;
    uint32_t state; /* SQ_PEND_* */
    uint32_t answered;
} sq_pend;

/* RESERVED: handed out by sqfw_authorize, not yet armed by the glue (which
 * has still to pend the operation and store its completion handle); it is
 * never taken, so nothing completes a slot without a handle. An attestation
 * that arrives meanwhile is remembered in `answered`. */
enum { SQ_PEND_FREE = 0, SQ_PEND_WAITING = 1, SQ_PEND_ANSWERED = 2, SQ_PEND_RESERVED = 3 };

struct sqfw_engine {
    sqfw_limits lim;
    sqfw_policy *pol;
    uint32_t next_gen;
    uint32_t level;
    uint64_t last_tick;
    sq_flow_table flows;
    sq_syn_table syn;
    sq_proc_cache attest;
    sq_proc_cache services;
    sq_proc_table procs;
    uint32_t svchost_chars;
    uint32_t pad2;
    uint16_t svchost_path[SQFW_SVCHOST_PATH_MAX];
    sq_event_ring events;
    sq_rate log_rate; /* connection-log budget */
    sq_tokens log_tok;
    uint32_t pended_now;
    uint32_t pad;
    sq_pend pend[SQFW_MAX_PENDED];
    sqfw_stats st;
    sqfw_event_tap tap; /* NULL unless someone listens (ETW) */
    void *tap_ctx;
};

void sq_reallocate(sqfw_engine *e, uint64_t now);
void sq_emit(sqfw_engine *e, uint32_t type, uint32_t reason, const sqfw_request *r, const sqfw_decision *d,
             uint64_t now);

#endif
