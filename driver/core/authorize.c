/* The per-connection decision (ALE auth layers), pending of unknown images,
 * and the per-packet shaping decision on established flows. */
#include "classify.h"
#include "engine_state.h"

void sq_emit(sqfw_engine *e, uint32_t type, uint32_t reason, const sqfw_request *r, const sqfw_decision *d,
             uint64_t now)
{
    sqfw_event *ev = sq_event_ring_push(&e->events);
    sqfw_event spare; /* a listener still hears what the agent's full ring loses */
    if (!ev) {
        e->st.events_dropped++;
        if (!e->tap)
            return;
        sq_zero(&spare, sizeof spare);
        ev = &spare;
    }
    ev->type = type;
    ev->reason = reason;
    ev->time_ns = now;
    if (d) {
        ev->rule_id = d->rule_id;
        ev->identity_id = d->identity_id;
        ev->value = type == SQFW_EV_NEW_IDENTITY ? d->pend_slot : d->level;
        ev->class_id = d->class_id;
    }
    if (r && type == SQFW_EV_NEW_IDENTITY)
        sqfw_process_image(e, r->process_key, &ev->image_volume, &ev->image_file_id);
    if (r) {
        ev->process_key = r->process_key;
        ev->pid = r->pid;
        ev->direction = r->direction;
        ev->protocol = r->protocol;
        ev->family = r->family;
        ev->remote_port = r->remote_port;
        sq_copy(ev->remote_addr, r->remote_addr, 16);
        ev->local_port = r->local_port;
        sq_copy(ev->local_addr, r->local_addr, 16);
        if (r->user && r->user_len && r->user_len <= SQFW_EVENT_USER_MAX) {
            sq_copy(ev->user, r->user, r->user_len);
            ev->user_len = (uint8_t)r->user_len;
        }
        uint32_t n = r->path_len;
        if (n > SQFW_EVENT_PATH_MAX) {
            n = SQFW_EVENT_PATH_MAX;
            ev->path_truncated = 1;
        }
        if (r->path && n)
            sq_copy(ev->path, r->path, n);
        ev->path_len = (uint16_t)n;
    }
    if (e->tap)
        e->tap(e->tap_ctx, ev);
}

/* The connection log: one budget for allowed connections and rate drops. */
static void log_connection(sqfw_engine *e, uint32_t type, const sqfw_request *r, const sqfw_decision *d,
                           uint64_t now)
{
    if (!sq_conforms(&e->log_tok, &e->log_rate, now, 1)) {
        e->st.events_suppressed++;
        return;
    }
    sq_take(&e->log_tok, &e->log_rate, 1);
    sq_emit(e, type, d->reason, r, d, now);
}

static int register_pend(sqfw_engine *e, const sqfw_request *r, uint64_t now, uint32_t *slot)
{
    const sqfw_policy *p = e->pol;
    if (e->pended_now >= p->max_pended)
        return SQFW_E_FULL;
    for (uint32_t i = 0; i < p->max_pended && i < SQFW_MAX_PENDED; i++) {
        sq_pend *q = &e->pend[i];
        if (q->state != SQ_PEND_FREE)
            continue;
        q->state = SQ_PEND_RESERVED;
        q->answered = 0;
        q->process_key = r->process_key;
        q->deadline_ns = now + (uint64_t)p->pend_timeout_ms * 1000000ull;
        e->pended_now++;
        *slot = i;
        return SQFW_OK;
    }
    return SQFW_E_FULL;
}

static void gather_facts(sqfw_engine *e, const sqfw_request *r, sq_facts *f)
{
    f->service = r->service;
    f->service_len = r->service ? r->service_len : 0;
    f->sha256 = NULL;
    if (!f->service_len) {
        const sq_pc_entry *s = sq_proc_cache_find(&e->services, r->process_key);
        if (s) {
            f->service = s->data;
            f->service_len = s->len;
        }
    }
    if (!f->service_len) {
        const sq_proc_entry *pe = sq_proc_table_find(&e->procs, r->process_key);
        if (pe && pe->service_len) {
            f->service = pe->service;
            f->service_len = pe->service_len;
        }
    }
    const sq_pc_entry *a = sq_proc_cache_find(&e->attest, r->process_key);
    if (a && a->len == 32)
        f->sha256 = a->data;
}

static int request_ok(const sqfw_request *r)
{
    if (!r)
        return 0;
    if (r->path_len > 32768 || r->service_len > SQFW_MAX_NAME || r->user_len > SQFW_MAX_USER)
        return 0;
    if ((r->path_len && !r->path) || (r->user_len && !r->user) || (r->service_len && !r->service))
        return 0;
    return r->direction == SQFW_DIR_OUTBOUND || r->direction == SQFW_DIR_INBOUND;
}

/* Rate limits apply only once the whitelist allowed the connection, so a
 * blocked flood never spends the tokens legitimate traffic needs. Every
 * bucket is checked before any is charged. */
static uint32_t rate_checks(sqfw_engine *e, const sqfw_request *r, const sq_match *m, uint64_t now)
{
    sqfw_policy *p = e->pol;
    sq_class *c = &p->cls[m->class_idx];
    c->conn_arrivals++;
    if (!(p->lvl[e->level].admit & (1ull << m->class_idx)))
        return SQFW_R_LEVEL;

    sq_syn_entry *src = NULL;
    int syn = p->has_syn && r->direction == SQFW_DIR_INBOUND && r->protocol == 6;
    if (syn) {
        uint64_t k1, k2;
        sq_syn_key(r->remote_addr, r->family, r->family == 4 ? p->syn_v4_prefix : p->syn_v6_prefix, &k1, &k2);
        src = sq_syn_get(&e->syn, r->family, k1, k2, 0, &p->syn_source, now);
        if (src && !sq_conforms(&src->tok, &p->syn_source, now, 1))
            return SQFW_R_SYN_SOURCE;
        if ((!src || !src->proven) && !sq_conforms(&c->syn_unproven, &p->syn_unproven, now, 1))
            return SQFW_R_SYN_UNPROVEN;
    }
    if (!sq_conforms(&c->conn, &c->conn_rate, now, 1))
        return SQFW_R_CLASS_RATE;
    sq_ident *id = &p->ident[m->ident_idx];
    if (!sq_conforms(&id->conn, &id->conn_rate, now, 1))
        return SQFW_R_APP_RATE;

    if (syn) {
        if (src)
            sq_take(&src->tok, &p->syn_source, 1);
        if (!src || !src->proven)
            sq_take(&c->syn_unproven, &p->syn_unproven, 1);
    }
    sq_take(&c->conn, &c->conn_rate, 1);
    sq_take(&id->conn, &id->conn_rate, 1);
    c->conn_accepted++;
    return SQFW_R_RULE;
}

static int is_rate_reason(uint32_t reason)
{
    return reason == SQFW_R_LEVEL || reason == SQFW_R_CLASS_RATE || reason == SQFW_R_APP_RATE ||
           reason == SQFW_R_SYN_SOURCE || reason == SQFW_R_SYN_UNPROVEN;
}

static int decide(sqfw_engine *e, const sqfw_request *r, uint64_t now, sqfw_decision *d, int charge)
{
    if (!e || !d)
        return SQFW_E_ARG;
    sq_zero(d, sizeof *d);
    if (!request_ok(r))
        return SQFW_E_ARG;
    d->level = e->level;
    if (!charge)
        d->flags |= SQFW_DF_EXPLAIN;
    sqfw_policy *p = e->pol;
    if (!p) {
        /* No whitelist yet (a boot-start driver before the agent's first
         * push): audit rather than block, so that DHCP, DNS and remote
         * administration keep the host reachable; the connection is reported
         * as one enforce mode would have blocked. */
        d->verdict = SQFW_ALLOW;
        d->reason = SQFW_R_NO_POLICY;
        d->flags |= SQFW_DF_AUDIT;
        if (charge) {
            e->st.authorized++;
            e->st.allowed++;
            e->st.audited++;
            sq_emit(e, SQFW_EV_AUDIT, d->reason, r, d, now);
        }
        return SQFW_OK;
    }

    sq_facts f;
    gather_facts(e, r, &f);
    sq_match m;
    sq_classify(p, r, &f, &m);
    d->reason = m.reason;
    d->identity_id = m.ident_idx >= 0 ? p->ident[m.ident_idx].id : 0;
    d->rule_id = m.rule_idx >= 0 ? p->rules[m.rule_idx].id : 0;
    d->class_id = p->cls[m.class_idx].id;

    switch (m.reason) {
    case SQFW_R_LOOPBACK:
    case SQFW_R_DNS_CLIENT:
        d->verdict = SQFW_ALLOW;
        break;
    case SQFW_R_RULE:
        if (charge)
            d->reason = rate_checks(e, r, &m, now);
        else if (!(p->lvl[e->level].admit & (1ull << m.class_idx)))
            d->reason = SQFW_R_LEVEL;
        d->verdict = d->reason == SQFW_R_RULE ? SQFW_ALLOW : SQFW_BLOCK;
        break;
    case SQFW_R_NEEDS_HASH:
        if (p->default_action == SQFW_ACTION_AUDIT || !charge) {
            d->verdict = p->default_action == SQFW_ACTION_AUDIT ? SQFW_BLOCK : SQFW_PEND;
        } else if (r->flags & SQFW_RF_REAUTH) {
            /* completed without an answer: do not pend the same connect twice */
            d->reason = SQFW_R_PEND_TIMEOUT;
            d->verdict = p->pend_timeout_action ? SQFW_ALLOW : SQFW_BLOCK;
        } else if (register_pend(e, r, now, &d->pend_slot) == SQFW_OK) {
            d->verdict = SQFW_PEND;
        } else {
            d->reason = SQFW_R_PEND_FULL;
            d->verdict = p->pend_timeout_action ? SQFW_ALLOW : SQFW_BLOCK;
        }
        break;
    default:
        d->verdict = SQFW_BLOCK;
        break;
    }

    /* a policy that whitelists nothing is audited too: enforce starts with the first identity */
    int audit_mode = p->default_action == SQFW_ACTION_AUDIT || p->n_ident == 0;
    int audited = 0;
    if (d->verdict == SQFW_BLOCK && audit_mode) {
        d->verdict = SQFW_ALLOW;
        d->flags |= SQFW_DF_AUDIT;
        audited = 1;
    }
    if (!charge)
        return SQFW_OK;

    e->st.authorized++;
    if (d->verdict == SQFW_ALLOW)
        e->st.allowed++;
    else if (d->verdict == SQFW_BLOCK)
        e->st.blocked++;
    if (audited)
        e->st.audited++;
    if (d->reason == SQFW_R_SYN_SOURCE || d->reason == SQFW_R_SYN_UNPROVEN)
        e->st.syn_dropped++;
    else if (d->reason == SQFW_R_LEVEL)
        e->st.level_dropped++;
    else if (d->reason == SQFW_R_CLASS_RATE || d->reason == SQFW_R_APP_RATE)
        e->st.rate_limited++;
    if (d->reason == SQFW_R_PEND_FULL)
        e->st.pend_full++;

    /* Events: per-connection policy decisions only. Rate-limit drops are
     * counted, not reported one by one: under a flood they would fill the
     * ring with noise. */
    if (m.reason == SQFW_R_NEEDS_HASH && !(r->flags & SQFW_RF_REAUTH)) {
        if (d->verdict == SQFW_PEND)
            e->st.pended++;
        sq_emit(e, SQFW_EV_NEW_IDENTITY, m.reason, r, d, now);
    } else if (audited && !is_rate_reason(d->reason)) {
        sq_emit(e, SQFW_EV_AUDIT, d->reason, r, d, now);
    } else if (d->verdict == SQFW_BLOCK && !is_rate_reason(d->reason)) {
        sq_emit(e, SQFW_EV_BLOCKED, d->reason, r, d, now);
    } else if (is_rate_reason(d->reason) || d->verdict == SQFW_ALLOW) {
        log_connection(e, is_rate_reason(d->reason) ? SQFW_EV_RATE : SQFW_EV_ALLOWED, r, d, now);
    }
    return SQFW_OK;
}

int sqfw_authorize(sqfw_engine *e, const sqfw_request *r, uint64_t now, sqfw_decision *d)
{
    return decide(e, r, now, d, 1);
}

int sqfw_explain(sqfw_engine *e, const sqfw_request *r, uint64_t now, sqfw_decision *d)
{
    return decide(e, r, now, d, 0);
}

int sqfw_attest(sqfw_engine *e, uint64_t process_key, const uint8_t sha256[32], uint64_t now)
{
    if (!e || !sha256 || process_key == 0)
        return SQFW_E_ARG;
    sq_proc_cache_put(&e->attest, process_key, sha256, 32, now);
    for (uint32_t i = 0; i < SQFW_MAX_PENDED && e->pended_now; i++) {
        if (e->pend[i].process_key != process_key)
            continue;
        if (e->pend[i].state == SQ_PEND_WAITING)
            e->pend[i].state = SQ_PEND_ANSWERED;
        else if (e->pend[i].state == SQ_PEND_RESERVED)
            e->pend[i].answered = 1;
    }
    return SQFW_OK;
}

int sqfw_pend_arm(sqfw_engine *e, uint32_t slot)
{
    if (!e || slot >= SQFW_MAX_PENDED || e->pend[slot].state != SQ_PEND_RESERVED)
        return SQFW_E_ARG;
    e->pend[slot].state = e->pend[slot].answered ? SQ_PEND_ANSWERED : SQ_PEND_WAITING;
    return SQFW_OK;
}

int sqfw_pend_abort(sqfw_engine *e, uint32_t slot)
{
    if (!e || slot >= SQFW_MAX_PENDED || e->pend[slot].state != SQ_PEND_RESERVED)
        return SQFW_E_ARG;
    e->pend[slot].state = SQ_PEND_FREE;
    e->pended_now--;
    return SQFW_OK;
}

int sqfw_pend_take_ready(sqfw_engine *e, uint64_t now, uint32_t *slot, uint32_t *verdict_on_timeout,
                         uint32_t *expired)
{
    if (!e || !slot || !verdict_on_timeout || !expired || e->pended_now == 0)
        return 0;
    for (uint32_t i = 0; i < SQFW_MAX_PENDED; i++) {
        sq_pend *q = &e->pend[i];
        int answered = q->state == SQ_PEND_ANSWERED;
        int late = q->state == SQ_PEND_WAITING && now >= q->deadline_ns;
        if (!answered && !late)
            continue;
        *slot = i;
        *expired = late ? 1u : 0u;
        /* with no policy left, the fail-closed answer is the safe one */
        *verdict_on_timeout = e->pol && e->pol->pend_timeout_action ? SQFW_ALLOW : SQFW_BLOCK;
        if (late)
            e->st.pend_timeouts++;
        q->state = SQ_PEND_FREE;
        e->pended_now--;
        return 1;
    }
    return 0;
}

int sqfw_service_bind(sqfw_engine *e, uint64_t process_key, const uint8_t *name, uint32_t name_len)
{
    if (!e || !name || name_len == 0 || name_len > SQ_PC_DATA || process_key == 0)
        return SQFW_E_ARG;
    sq_proc_cache_put(&e->services, process_key, name, name_len, 0);
    return SQFW_OK;
}

int sqfw_flow_established(sqfw_engine *e, uint64_t flow_id, const sqfw_request *r, uint64_t now)
{
    if (!e || !request_ok(r))
        return SQFW_E_ARG;
    sqfw_policy *p = e->pol;
    if (!p)
        return SQFW_E_NO_POLICY;
    sq_facts f;
    gather_facts(e, r, &f);
    sq_match m;
    sq_classify(p, r, &f, &m);
    sq_flow *fl = sq_flow_alloc(&e->flows, flow_id);
    if (!fl) {
        e->st.flows_failed++;
        return SQFW_E_FULL;
    }
    fl->identity_id = m.ident_idx >= 0 ? p->ident[m.ident_idx].id : 0;
    fl->class_idx = (uint16_t)m.class_idx;
    fl->class_id = p->cls[m.class_idx].id;
    fl->policy_gen = p->gen;
    fl->refs = 1;
    fl->direction = r->direction;
    fl->protocol = r->protocol;
    fl->family = r->family;
    e->st.flows_created++;

    /* A completed inbound handshake proves the source address is real. */
    if (p->has_syn && r->direction == SQFW_DIR_INBOUND && r->protocol == 6) {
        uint64_t k1, k2;
        sq_syn_key(r->remote_addr, r->family, r->family == 4 ? p->syn_v4_prefix : p->syn_v6_prefix, &k1, &k2);
        sq_syn_entry *s = sq_syn_get(&e->syn, r->family, k1, k2, 1, &p->syn_source, now);
        if (s)
            s->proven = 1;
    }
    return SQFW_OK;
}

int sqfw_flow_ref(sqfw_engine *e, uint64_t flow_id)
{
    sq_flow *f = e ? sq_flow_find(&e->flows, flow_id) : NULL;
    if (!f)
        return SQFW_E_NOT_FOUND;
    f->refs++;
    return SQFW_OK;
}

int sqfw_flow_unref(sqfw_engine *e, uint64_t flow_id)
{
    sq_flow *f = e ? sq_flow_find(&e->flows, flow_id) : NULL;
    if (!f)
        return SQFW_E_NOT_FOUND;
    if (--f->refs == 0)
        sq_flow_free(&e->flows, f);
    return SQFW_OK;
}

int sqfw_flow_lookup(sqfw_engine *e, uint64_t flow_id, uint32_t *identity_id, uint32_t *class_id)
{
    sq_flow *f = e ? sq_flow_find(&e->flows, flow_id) : NULL;
    if (!f)
        return SQFW_E_NOT_FOUND;
    if (identity_id)
        *identity_id = f->identity_id;
    if (class_id)
        *class_id = f->class_id;
    return SQFW_OK;
}

/* retry: a queued packet asking again; it arrived once, when it was first
 * deferred, so it adds neither to the class's arrivals (QGuard's demand
 * estimate) nor to the deferral count. behind: a new arrival that must
 * queue behind the class's waiting packets whatever the tokens say. */
enum { PKT_NEW = 0, PKT_RETRY = 1, PKT_BEHIND = 2 };
static int packet(sqfw_engine *e, uint64_t flow_id, uint32_t bytes, uint64_t now, sqfw_decision *d, int mode)
{
    int retry = mode == PKT_RETRY;
    if (!e || !d)
        return SQFW_E_ARG;
    sq_zero(d, sizeof *d);
    d->level = e->level;
    sqfw_policy *p = e->pol;
    sq_flow *f = sq_flow_find(&e->flows, flow_id);
    if (!f || !p) {
        /* not a flow we attributed (e.g. older than the driver): the ALE
         * layers already authorised it, so only shaping is skipped */
        d->verdict = SQFW_ALLOW;
        d->reason = SQFW_R_FLOW_UNKNOWN;
        e->st.packets_passed++;
        return SQFW_OK;
    }
    if (f->policy_gen != p->gen) {
        int ci = sq_class_index(p, f->class_id);
        f->class_idx = (uint16_t)(ci < 0 ? 0 : ci);
        f->policy_gen = p->gen;
    }
    sq_class *c = &p->cls[f->class_idx];
    d->identity_id = f->identity_id;
    d->class_id = c->id;
    if (!retry)
        c->pkt_arrivals++;
    if (!(p->lvl[e->level].admit & (1ull << f->class_idx))) {
        d->verdict = SQFW_BLOCK;
        d->reason = SQFW_R_LEVEL;
        if (p->default_action == SQFW_ACTION_AUDIT) {
            d->verdict = SQFW_ALLOW;
            d->flags |= SQFW_DF_AUDIT;
        } else {
            e->st.packets_dropped++;
            return SQFW_OK;
        }
    }
    if (!(d->flags & SQFW_DF_AUDIT) && (mode == PKT_BEHIND || !sq_conforms(&c->pkt, &c->pkt_rate, now, 1) ||
                                        !sq_conforms(&c->bytes, &c->byte_rate, now, bytes))) {
        uint64_t w1 = sq_wait_ns(&c->pkt, &c->pkt_rate, 1), w2 = sq_wait_ns(&c->bytes, &c->byte_rate, bytes);
        d->verdict = SQFW_DEFER;
        d->reason = SQFW_R_SHAPED;
        d->wait_ns = w1 > w2 ? w1 : w2;
        if (!retry)
            e->st.packets_deferred++;
        return SQFW_OK;
    }
    sq_take(&c->pkt, &c->pkt_rate, 1);
    sq_take(&c->bytes, &c->byte_rate, bytes);
    c->pkt_accepted++;
    f->packets++;
    f->bytes += bytes;
    d->verdict = SQFW_ALLOW;
    if (!d->reason)
        d->reason = SQFW_R_PASS;
    e->st.packets_passed++;
    return SQFW_OK;
}

int sqfw_packet(sqfw_engine *e, uint64_t flow_id, uint32_t bytes, uint64_t now, sqfw_decision *d)
{
    return packet(e, flow_id, bytes, now, d, PKT_NEW);
}

int sqfw_packet_retry(sqfw_engine *e, uint64_t flow_id, uint32_t bytes, uint64_t now, sqfw_decision *d)
{
    return packet(e, flow_id, bytes, now, d, PKT_RETRY);
}

int sqfw_packet_behind(sqfw_engine *e, uint64_t flow_id, uint32_t bytes, uint64_t now, sqfw_decision *d)
{
    return packet(e, flow_id, bytes, now, d, PKT_BEHIND);
}

int sqfw_packet_unqueued(sqfw_engine *e)
{
    if (!e)
        return SQFW_E_ARG;
    if (e->st.packets_deferred)
        e->st.packets_deferred--;
    e->st.packets_dropped++;
    return SQFW_OK;
}
