/* Token buckets in integer nano-units: one token is 1e9 units, and time is
 * in nanoseconds, so a refill is one multiply (elapsed_ns * rate) with no
 * division on the packet path. Parameters and state are separate so that
 * many buckets (e.g. one per SYN source) can share one parameter set. */
#ifndef SQFW_BUCKET_H
#define SQFW_BUCKET_H

#include "sqfw_base.h"

#define SQ_TOKEN 1000000000ull

typedef struct sq_rate {
    uint64_t cap;     /* burst * SQ_TOKEN */
    uint64_t fill_ns; /* elapsed time that refills an empty bucket; bounds elapsed*rate */
    uint32_t rate;    /* tokens per second, 0 = unlimited */
    uint32_t burst;
} sq_rate;

typedef struct sq_tokens {
    uint64_t tokens;
    uint64_t last_ns;
} sq_tokens;

/* Runs at policy load or tick time (it divides). burst >= 1 when rate > 0. */
static inline void sq_rate_init(sq_rate *r, uint32_t rate, uint32_t burst)
{
    r->rate = rate;
    r->burst = rate ? (burst ? burst : 1) : 0;
    r->cap = (uint64_t)r->burst * SQ_TOKEN;
    r->fill_ns = rate ? r->cap / rate + 1 : 0;
}

static inline void sq_tokens_full(sq_tokens *t, const sq_rate *r, uint64_t now)
{
    t->tokens = r->cap;
    t->last_ns = now;
}

static inline void sq_refill(sq_tokens *t, const sq_rate *r, uint64_t now)
{
    if (now <= t->last_ns)
        return; /* clocks that step back refill nothing */
    uint64_t el = now - t->last_ns;
    t->last_ns = now;
    if (el >= r->fill_ns) {
        t->tokens = r->cap;
        return;
    }
    /* el < cap / rate, so el * rate < cap <= 2^32 * 1e9 < 2^63 */
    t->tokens += el * r->rate;
    if (t->tokens > r->cap)
        t->tokens = r->cap;
}

/* cost above the burst is clamped: an oversize packet passes when the
 * bucket is full instead of waiting forever. */
static inline uint64_t sq_cost(const sq_rate *r, uint32_t cost)
{
    uint32_t c = cost > r->burst ? r->burst : cost;
    return (uint64_t)c * SQ_TOKEN;
}

static inline int sq_conforms(sq_tokens *t, const sq_rate *r, uint64_t now, uint32_t cost)
{
    if (r->rate == 0)
        return 1;
    sq_refill(t, r, now);
    return t->tokens >= sq_cost(r, cost);
}

static inline void sq_take(sq_tokens *t, const sq_rate *r, uint32_t cost)
{
    if (r->rate == 0)
        return;
    uint64_t c = sq_cost(r, cost);
    t->tokens = t->tokens >= c ? t->tokens - c : 0;
}

/* Nanoseconds until `cost` conforms (divides: only for deferred packets). */
static inline uint64_t sq_wait_ns(const sq_tokens *t, const sq_rate *r, uint32_t cost)
{
    if (r->rate == 0)
        return 0;
    uint64_t need = sq_cost(r, cost);
    if (t->tokens >= need)
        return 0;
    return (need - t->tokens + r->rate - 1) / r->rate;
}

/* Changes the rate keeping the tokens earned so far (clamped to the new cap). */
static inline void sq_rate_change(sq_tokens *t, sq_rate *r, uint32_t rate, uint32_t burst, uint64_t now)
{
    sq_refill(t, r, now);
    int was_unlimited = r->rate == 0;
    sq_rate_init(r, rate, burst);
    if (was_unlimited || t->tokens > r->cap)
        t->tokens = r->cap;
    t->last_ns = now;
}

#endif
