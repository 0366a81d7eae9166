/* User-mode host of the engine for libsieveqfw.so: owns the memory the
 * driver would take from NonPagedPoolNx, and serialises calls with a mutex
 * the way the driver does with a spin lock. Not compiled into the driver. */
#include <pthread.h>
#include <stdlib.h>

#include "sqfw.h"

struct sqfw_host {
    pthread_mutex_t lock;
    sqfw_engine *engine;
    void *engine_mem;
    void *policy_mem;
};

uint32_t sqfw_abi_version(void) { return SQFW_ABI_VERSION; }

sqfw_host *sqfw_host_open(const sqfw_limits *limits)
{
    size_t size = sqfw_engine_size(limits);
    if (size == 0)
        return NULL;
    sqfw_host *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->engine_mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (!h->engine_mem || sqfw_engine_init(h->engine_mem, size, limits, &h->engine) != SQFW_OK) {
        free(h->engine_mem);
        free(h);
        return NULL;
    }
    pthread_mutex_init(&h->lock, NULL);
    return h;
}

void sqfw_host_close(sqfw_host *h)
{
    if (!h)
        return;
    pthread_mutex_destroy(&h->lock);
    free(h->policy_mem);
    free(h->engine_mem);
    free(h);
}

int sqfw_host_set_policy(sqfw_host *h, const uint8_t *blob, size_t len, uint64_t now, uint32_t *err_offset)
{
    if (!h)
        return SQFW_E_ARG;
    size_t need = 0;
    /* compile outside the lock: the running policy keeps serving meanwhile */
    int rc = sqfw_policy_arena_size(blob, len, &need, err_offset);
    if (rc != SQFW_OK)
        return rc;
    void *mem = aligned_alloc(64, (need + 63) & ~(size_t)63);
    if (!mem)
        return SQFW_E_NOMEM;
    sqfw_policy *p = NULL;
    rc = sqfw_policy_compile(blob, len, mem, need, &p, err_offset);
    if (rc != SQFW_OK) {
        free(mem);
        return rc;
    }
    pthread_mutex_lock(&h->lock);
    sqfw_policy *old = NULL;
    rc = sqfw_engine_install(h->engine, p, now, &old);
    void *old_mem = NULL;
    if (rc == SQFW_OK) {
        old_mem = h->policy_mem;
        h->policy_mem = mem;
    }
    pthread_mutex_unlock(&h->lock);
    free(rc == SQFW_OK ? old_mem : mem);
    return rc;
}

sqfw_engine *sqfw_host_engine(sqfw_host *h) { return h ? h->engine : NULL; }

#define LOCKED(expr)                                                                                                   \
    do {                                                                                                               \
        if (!h)                                                                                                        \
            return SQFW_E_ARG;                                                                                         \
        pthread_mutex_lock(&h->lock);                                                                                  \
        int rc_ = (expr);                                                                                              \
        pthread_mutex_unlock(&h->lock);                                                                                \
        return rc_;                                                                                                    \
    } while (0)

/* The host has no operation to pend: a PEND slot is armed at once, so its
 * callers see the same take-ready behaviour as before the two-step pend. */
static int authorize_armed(sqfw_engine *e, const sqfw_request *r, uint64_t now, sqfw_decision *d)
{
    int rc = sqfw_authorize(e, r, now, d);
    if (rc == SQFW_OK && d->verdict == SQFW_PEND)
        sqfw_pend_arm(e, d->pend_slot);
    return rc;
}
int sqfw_host_authorize(sqfw_host *h, const sqfw_request *r, uint64_t now, sqfw_decision *d)
{
    LOCKED(authorize_armed(h->engine, r, now, d));
}
int sqfw_host_explain(sqfw_host *h, const sqfw_request *r, uint64_t now, sqfw_decision *d)
{
    LOCKED(sqfw_explain(h->engine, r, now, d));
}
int sqfw_host_flow_established(sqfw_host *h, uint64_t flow_id, const sqfw_request *r, uint64_t now)
{
    LOCKED(sqfw_flow_established(h->engine, flow_id, r, now));
}
int sqfw_host_flow_deleted(sqfw_host *h, uint64_t flow_id) { LOCKED(sqfw_flow_unref(h->engine, flow_id)); }
int sqfw_host_packet(sqfw_host *h, uint64_t flow_id, uint32_t bytes, uint64_t now, sqfw_decision *d)
{
    LOCKED(sqfw_packet(h->engine, flow_id, bytes, now, d));
}
int sqfw_host_attest(sqfw_host *h, uint64_t process_key, const uint8_t *sha256, uint64_t now)
{
    LOCKED(sqfw_attest(h->engine, process_key, sha256, now));
}
int sqfw_host_set_level(sqfw_host *h, uint32_t level, uint64_t now) { LOCKED(sqfw_set_level(h->engine, level, now)); }
int sqfw_host_next_event(sqfw_host *h, sqfw_event *ev) { LOCKED(sqfw_next_event(h->engine, ev)); }
int sqfw_host_pend_take_ready(sqfw_host *h, uint64_t now, uint32_t *slot, uint32_t *verdict_on_timeout,
                              uint32_t *expired)
{
    LOCKED(sqfw_pend_take_ready(h->engine, now, slot, verdict_on_timeout, expired));
}
int sqfw_host_service_bind(sqfw_host *h, uint64_t process_key, const uint8_t *name, uint32_t name_len)
{
    LOCKED(sqfw_service_bind(h->engine, process_key, name, name_len));
}

void sqfw_host_tick(sqfw_host *h, uint64_t now)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    sqfw_tick(h->engine, now);
    pthread_mutex_unlock(&h->lock);
}

void sqfw_host_stats(sqfw_host *h, sqfw_stats *s)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    sqfw_get_stats(h->engine, s);
    pthread_mutex_unlock(&h->lock);
}
