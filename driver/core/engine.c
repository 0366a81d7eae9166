/* Engine lifecycle, policy installation, flows and QGuard levels. The
 * per-connection decision lives in authorize.c. */
#include "engine_state.h"
#include "share.h"

#define MAX_FLOWS (1u << 24)
#define MAX_EVENTS (1u << 16)
#define MAX_CACHE (1u << 20)

static int limits_ok(const sqfw_limits *l)
{
    if (!l || l->max_flows == 0 || l->max_flows > MAX_FLOWS)
        return 0;
    if (l->max_syn_slots && (l->max_syn_slots < SQFW_MIN_SYN_SLOTS || l->max_syn_slots > SQFW_MAX_SYN_SLOTS ||
                             (l->max_syn_slots & (l->max_syn_slots - 1))))
        return 0;
    if (l->max_attest == 0 || l->max_attest > MAX_CACHE || l->max_services == 0 || l->max_services > MAX_CACHE)
        return 0;
    if (l->max_processes > MAX_CACHE)
        return 0;
    return l->max_events > 0 && l->max_events <= MAX_EVENTS;
}

size_t sqfw_engine_size(const sqfw_limits *l)
{
    if (!limits_ok(l))
        return 0;
    return sq_align8(sizeof(sqfw_engine)) + sq_flow_table_bytes(l->max_flows) + sq_syn_table_bytes(l->max_syn_slots) +
           sq_proc_cache_bytes(l->max_attest) + sq_proc_cache_bytes(l->max_services) +
           sq_proc_table_bytes(l->max_processes) + sq_event_ring_bytes(l->max_events);
}

int sqfw_engine_init(void *mem, size_t size, const sqfw_limits *l, sqfw_engine **out)
{
    if (!out || !mem || ((uintptr_t)mem & 7u))
        return SQFW_E_ARG;
    size_t need = sqfw_engine_size(l);
    if (need == 0)
        return SQFW_E_LIMIT;
    if (size < need)
        return SQFW_E_NOMEM;
    uint8_t *m = (uint8_t *)mem;
    sqfw_engine *e = (sqfw_engine *)m;
    sq_zero(e, sizeof *e);
    e->lim = *l;
    size_t o = sq_align8(sizeof(sqfw_engine));
    sq_flow_table_init(&e->flows, m + o, l->max_flows);
    o += sq_flow_table_bytes(l->max_flows);
    sq_syn_table_init(&e->syn, m + o, l->max_syn_slots, l->seed);
    o += sq_syn_table_bytes(l->max_syn_slots);
    sq_proc_cache_init(&e->attest, m + o, l->max_attest);
    o += sq_proc_cache_bytes(l->max_attest);
    sq_proc_cache_init(&e->services, m + o, l->max_services);
    o += sq_proc_cache_bytes(l->max_services);
    sq_proc_table_init(&e->procs, m + o, l->max_processes);
    o += sq_proc_table_bytes(l->max_processes);
    sq_event_ring_init(&e->events, m + o, l->max_events);
    sq_rate_init(&e->log_rate, SQFW_CONN_LOG_RATE, SQFW_CONN_LOG_BURST);
    sq_tokens_full(&e->log_tok, &e->log_rate, 0);
    *out = e;
    return SQFW_OK;
}

int sqfw_engine_install(sqfw_engine *e, sqfw_policy *p, uint64_t now, sqfw_policy **previous)
{
    if (!e || !p)
        return SQFW_E_ARG;
    if (p->has_syn && p->syn_slots > e->lim.max_syn_slots)
        return SQFW_E_LIMIT;
    p->gen = ++e->next_gen;
    for (uint32_t i = 0; i < p->n_class; i++) {
        sq_class *c = &p->cls[i];
        sq_tokens_full(&c->pkt, &c->pkt_rate, now);
        sq_tokens_full(&c->bytes, &c->byte_rate, now);
        sq_tokens_full(&c->conn, &c->conn_rate, now);
        sq_tokens_full(&c->syn_unproven, &p->syn_unproven, now);
    }
    for (uint32_t i = 0; i < p->n_ident; i++)
        sq_tokens_full(&p->ident[i].conn, &p->ident[i].conn_rate, now);
    /* Keep the monitor's level across a policy push when it still exists. */
    if (!e->pol || e->level >= p->n_level)
        e->level = p->initial_level;
    uint32_t slots = p->has_syn ? p->syn_slots : 0;
    if (slots != e->syn.slots)
        sq_syn_table_reset(&e->syn, slots); /* proven sources survive pushes that keep the size */

    sqfw_policy *old = e->pol;
    e->pol = p;
    sq_reallocate(e, now);
    e->st.policy_serial = p->serial;
    e->st.policy_rules = p->n_rules;
    e->st.policy_identities = p->n_ident;
    e->st.level_count = p->n_level;
    e->st.level = e->level;
    sqfw_decision d;
    sq_zero(&d, sizeof d);
    d.level = e->level;
    sq_emit(e, SQFW_EV_POLICY, 0, NULL, &d, now);
    if (previous)
        *previous = old;
    return SQFW_OK;
}

sqfw_policy *sqfw_engine_detach(sqfw_engine *e)
{
    if (!e)
        return NULL;
    sqfw_policy *p = e->pol;
    e->pol = NULL;
    return p;
}

/* Class rates for the active level: uncapped levels use the configured
 * rates; capped ones give each admitted class its weighted max-min share
 * of the cap, never more than it asked for (demand + 1/8 headroom). */
static void allocate_dim(sqfw_policy *p, const sq_level *lv, int conn, uint64_t now)
{
    uint32_t weight[SQFW_MAX_CLASSES];
    uint64_t want[SQFW_MAX_CLASSES], out[SQFW_MAX_CLASSES];
    uint32_t cap = conn ? lv->conn_cap : lv->pkt_cap;
    for (uint32_t i = 0; i < p->n_class; i++) {
        sq_class *c = &p->cls[i];
        uint32_t cfg = conn ? c->cfg_conn_rate : c->cfg_pkt_rate;
        uint64_t demand = conn ? c->conn_demand : c->pkt_demand;
        uint64_t w = demand + demand / 8 + 1;
        want[i] = cfg && w > cfg ? cfg : w;
        weight[i] = c->weight;
    }
    if (cap)
        sq_maxmin_share(p->n_class, lv->admit, weight, want, cap, out);
    for (uint32_t i = 0; i < p->n_class; i++) {
        sq_class *c = &p->cls[i];
        uint32_t cfg = conn ? c->cfg_conn_rate : c->cfg_pkt_rate;
        uint32_t cfg_burst = conn ? c->cfg_conn_burst : c->cfg_pkt_burst;
        uint32_t rate = cfg, burst = cfg_burst;
        if (cap) {
            /* rate 0 would mean unlimited: a starved class keeps a trickle */
            rate = out[i] ? (uint32_t)out[i] : 1;
            uint32_t b = rate / 10 ? rate / 10 : 1; /* 100 ms worth */
            burst = cfg_burst && cfg_burst < b ? cfg_burst : b;
        }
        sq_rate *r = conn ? &c->conn_rate : &c->pkt_rate;
        sq_tokens *t = conn ? &c->conn : &c->pkt;
        if (r->rate != rate || r->burst != burst)
            sq_rate_change(t, r, rate, burst, now);
    }
}

void sq_reallocate(sqfw_engine *e, uint64_t now)
{
    sqfw_policy *p = e->pol;
    if (!p)
        return;
    const sq_level *lv = &p->lvl[e->level];
    allocate_dim(p, lv, 0, now);
    allocate_dim(p, lv, 1, now);
}

void sqfw_tick(sqfw_engine *e, uint64_t now)
{
    if (!e || !e->pol)
        return;
    if (e->last_tick == 0 || now <= e->last_tick) {
        e->last_tick = now;
        return;
    }
    uint64_t el = now - e->last_tick;
    if (el < 1000000)
        return;
    sqfw_policy *p = e->pol;
    for (uint32_t i = 0; i < p->n_class; i++) {
        sq_class *c = &p->cls[i];
        uint64_t pr = c->pkt_arrivals * 1000000000ull / el, cr = c->conn_arrivals * 1000000000ull / el;
        /* EWMA with weight 1/2: follows a surge within a few ticks */
        c->pkt_demand = c->pkt_demand ? (c->pkt_demand + pr) / 2 : pr;
        c->conn_demand = c->conn_demand ? (c->conn_demand + cr) / 2 : cr;
        c->pkt_arrivals = c->conn_arrivals = 0;
    }
    e->last_tick = now;
    sq_reallocate(e, now);
}

int sqfw_set_level(sqfw_engine *e, uint32_t level, uint64_t now)
{
    if (!e)
        return SQFW_E_ARG;
    if (!e->pol)
        return SQFW_E_NO_POLICY;
    if (level >= e->pol->n_level)
        return SQFW_E_ARG;
    if (level == e->level)
        return SQFW_OK;
    e->level = level;
    e->st.level = level;
    sq_reallocate(e, now);
    sqfw_decision d;
    sq_zero(&d, sizeof d);
    d.level = level;
    sq_emit(e, SQFW_EV_LEVEL, 0, NULL, &d, now);
    return SQFW_OK;
}

void sqfw_get_stats(const sqfw_engine *e, sqfw_stats *s)
{
    if (!e || !s)
        return;
    *s = e->st;
    s->flows_active = e->flows.active;
    s->pended_now = e->pended_now;
    s->level = e->level;
    s->processes_evicted = e->procs.evicted;
    s->processes_refused = e->procs.refused;
    s->processes_tracked = e->procs.live;
    s->processes_services = e->procs.services;
}

int sqfw_next_event(sqfw_engine *e, sqfw_event *ev)
{
    if (!e || !ev)
        return 0;
    return sq_event_ring_pop(&e->events, ev);
}

const char *sqfw_status_name(int s)
{
    static const char *const names[] = {
        "ok", "too-short", "too-long", "bad-magic", "bad-version", "bad-header", "length-mismatch",
        "bad-checksum", "reserved-nonzero", "bad-section-table", "section-out-of-bounds", "section-misaligned",
        "section-overlap", "section-duplicate", "section-unknown", "section-missing", "section-size", "nonzero-gap",
        "bad-count", "bad-string-ref", "duplicate", "bad-enum", "bad-prefix", "host-bits-set", "bad-ports",
        "bad-class-ref", "bad-identity-ref", "bad-rate", "bad-levels", "bad-settings", "bad-hash"};
    if (s >= 0 && (size_t)s < sizeof names / sizeof names[0])
        return names[s];
    switch (s) {
    case SQFW_E_ARG:
        return "bad-argument";
    case SQFW_E_NOMEM:
        return "no-memory";
    case SQFW_E_NO_POLICY:
        return "no-policy";
    case SQFW_E_FULL:
        return "full";
    case SQFW_E_NOT_FOUND:
        return "not-found";
    case SQFW_E_LIMIT:
        return "over-limit";
    default:
        return "unknown";
    }
}

void sqfw_set_event_tap(sqfw_engine *e, sqfw_event_tap tap, void *ctx)
{
    if (!e)
        return;
    e->tap_ctx = ctx;
    e->tap = tap;
}
