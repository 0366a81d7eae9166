#include "../core/engine_state.h"
#include "../core/policy_format.h"
#include "fixture.h"
#include "golden_defs.h"
#include "test.h"

#define AGENT "\\device\\harddiskvolume2\\program files\\sieveq\\agent.exe"
#define CURL "\\device\\harddiskvolume2\\windows\\system32\\curl.exe"
#define SID "S-1-5-21-1000-1000-1000-1001"

static const uint8_t sha_agent[32] = {0xd4, 0xf0, 0xbc, 0x5a, 0x29, 0xde, 0x06, 0xb5, 0x10, 0xf9, 0xaa,
                                      0x42, 0x8f, 0x1e, 0xed, 0xba, 0x92, 0x60, 0x12, 0xb5, 0x91, 0xfe,
                                      0xf7, 0xa5, 0x18, 0xe7, 0x76, 0xa7, 0xc9, 0xbd, 0x18, 0x24};

static void open_policy(fx_engine *f, int golden)
{
    sqfw_limits l = fx_limits();
    CHECK_EQ(fx_open(f, &l), SQFW_OK);
    CHECK_EQ(fx_install(f, golden_defs[golden].policy, 1), SQFW_OK);
    sqfw_event ev;
    while (sqfw_next_event(f->e, &ev)) /* drop the POLICY event */
        ;
}

/* Until a whitelist exists the driver audits: at boot, before the agent's
 * first push, blocking would take DHCP, DNS and remote administration down. */
TEST(engine_audits_until_a_whitelist_exists)
{
    fx_engine f;
    sqfw_limits l = fx_limits();
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    sqfw_decision d;
    CHECK_EQ(sqfw_authorize(f.e, &r, 1, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.reason, SQFW_R_NO_POLICY);
    CHECK_EQ(d.flags & SQFW_DF_AUDIT, SQFW_DF_AUDIT);
    CHECK_EQ(sqfw_set_level(f.e, 1, 1), SQFW_E_NO_POLICY);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.audited, 1u);
    CHECK_EQ(st.blocked, 0u);
    sqfw_event ev;
    CHECK_EQ(sqfw_next_event(f.e, &ev), 1);
    CHECK_EQ(ev.type, SQFW_EV_AUDIT);
    CHECK_EQ(ev.reason, SQFW_R_NO_POLICY);
    CHECK_EQ(ev.pid, 4242u);

    /* an enforce policy that names no application: still audited */
    qb_policy empty = *golden_defs[1].policy;
    empty.serial = 9;
    empty.default_action = SQFW_ACTION_ENFORCE;
    empty.ids = NULL, empty.n_ids = 0;
    empty.rules = NULL, empty.n_rules = 0;
    CHECK_EQ(fx_install(&f, &empty, 2), SQFW_OK);
    CHECK_EQ(sqfw_authorize(f.e, &r, 3, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.flags & SQFW_DF_AUDIT, SQFW_DF_AUDIT);
    CHECK_EQ(d.reason, SQFW_R_UNKNOWN_APP);

    /* the first identity turns enforce on: the same connection is blocked */
    CHECK_EQ(fx_install(&f, golden_defs[1].policy, 4), SQFW_OK);
    CHECK_EQ(sqfw_authorize(f.e, &r, 5, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_BLOCK);
    sqfw_limits bad = l;
    bad.max_syn_slots = 100; /* not a power of two */
    CHECK_EQ(sqfw_engine_size(&bad), 0);
    fx_close(&f);
}

TEST(engine_pend_attest_complete_and_reauthorize)
{
    fx_engine f;
    open_policy(&f, 1);
    sqfw_request r = fx_req(AGENT, SQFW_DIR_OUTBOUND, 6, "10.20.1.1", 443);
    sqfw_decision d;
    CHECK_EQ(sqfw_authorize(f.e, &r, 100 * MS, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_PEND);
    uint32_t slot = d.pend_slot;
    CHECK_EQ(sqfw_pend_arm(f.e, slot), SQFW_OK);

    sqfw_event ev;
    CHECK(sqfw_next_event(f.e, &ev));
    CHECK_EQ(ev.type, SQFW_EV_NEW_IDENTITY);
    CHECK_EQ(ev.process_key, 1000);
    CHECK_EQ(ev.value, slot);
    CHECK_EQ(ev.path_len, strlen(AGENT));
    CHECK(memcmp(ev.path, AGENT, ev.path_len) == 0);

    uint32_t s, v, expired;
    CHECK(!sqfw_pend_take_ready(f.e, 200 * MS, &s, &v, &expired)); /* not answered, not late */
    CHECK_EQ(sqfw_attest(f.e, 1000, sha_agent, 300 * MS), SQFW_OK);
    CHECK(sqfw_pend_take_ready(f.e, 300 * MS, &s, &v, &expired));
    CHECK_EQ(s, slot);
    CHECK_EQ(expired, 0);
    r.flags = SQFW_RF_REAUTH;
    CHECK_EQ(sqfw_authorize(f.e, &r, 301 * MS, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.rule_id, 1);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.pended, 1);
    CHECK_EQ(st.pended_now, 0);
    fx_close(&f);
}

TEST(engine_pend_times_out_fail_closed_and_is_bounded)
{
    fx_engine f;
    open_policy(&f, 1); /* max_pended 64, 2000 ms, fail-closed */
    sqfw_decision d;
    int pended = 0, full = 0;
    for (int i = 0; i < 70; i++) {
        sqfw_request r = fx_req(AGENT, SQFW_DIR_OUTBOUND, 6, "10.20.1.1", 443);
        r.process_key = 5000 + (uint64_t)i;
        sqfw_authorize(f.e, &r, 0, &d);
        if (d.verdict == SQFW_PEND && sqfw_pend_arm(f.e, d.pend_slot) == SQFW_OK)
            pended++;
        else if (d.reason == SQFW_R_PEND_FULL && d.verdict == SQFW_BLOCK)
            full++;
    }
    CHECK_EQ(pended, 64);
    CHECK_EQ(full, 6);
    uint32_t s, v, expired, n = 0;
    CHECK(!sqfw_pend_take_ready(f.e, 1999 * MS, &s, &v, &expired));
    while (sqfw_pend_take_ready(f.e, 2000 * MS, &s, &v, &expired)) {
        CHECK_EQ(expired, 1);
        CHECK_EQ(v, SQFW_BLOCK);
        n++;
    }
    CHECK_EQ(n, 64);
    /* the re-authorisation after a time-out does not pend again */
    sqfw_request r = fx_req(AGENT, SQFW_DIR_OUTBOUND, 6, "10.20.1.1", 443);
    r.flags = SQFW_RF_REAUTH;
    sqfw_authorize(f.e, &r, 2001 * MS, &d);
    CHECK_EQ(d.verdict, SQFW_BLOCK);
    CHECK_EQ(d.reason, SQFW_R_PEND_TIMEOUT);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.pend_timeouts, 64);
    CHECK_EQ(st.pend_full, 6);
    fx_close(&f);
}

/* The glue pends the operation and stores its completion handle after
 * sqfw_authorize returned, outside the lock; an attestation or a time-out in
 * that window must not hand the slot to the completer (it would find no
 * handle: the connect hangs and the handle leaks). */
TEST(engine_pend_slot_not_completable_until_armed)
{
    fx_engine f;
    open_policy(&f, 1); /* max_pended 64, 2000 ms */
    sqfw_request r = fx_req(AGENT, SQFW_DIR_OUTBOUND, 6, "10.20.1.1", 443);
    sqfw_decision d;
    CHECK_EQ(sqfw_authorize(f.e, &r, 100 * MS, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_PEND);
    uint32_t slot = d.pend_slot, s, v, expired;
    CHECK_EQ(sqfw_attest(f.e, 1000, sha_agent, 101 * MS), SQFW_OK);
    CHECK(!sqfw_pend_take_ready(f.e, 101 * MS, &s, &v, &expired));
    CHECK(!sqfw_pend_take_ready(f.e, 5000 * MS, &s, &v, &expired)); /* nor when late */
    CHECK_EQ(sqfw_pend_arm(f.e, slot), SQFW_OK);
    CHECK_EQ(sqfw_pend_arm(f.e, slot), SQFW_E_ARG); /* armed once */
    CHECK(sqfw_pend_take_ready(f.e, 102 * MS, &s, &v, &expired));
    CHECK_EQ(s, slot);
    CHECK_EQ(expired, 0); /* the answer that came before arming is kept */

    /* a slot the glue could not pend is freed, never completed */
    r.process_key = 1001;
    CHECK_EQ(sqfw_authorize(f.e, &r, 200 * MS, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_PEND);
    CHECK_EQ(sqfw_pend_abort(f.e, d.pend_slot), SQFW_OK);
    CHECK(!sqfw_pend_take_ready(f.e, 9000 * MS, &s, &v, &expired));
    CHECK_EQ(sqfw_pend_abort(f.e, d.pend_slot), SQFW_E_ARG);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.pended_now, 0);

    /* unarmed and armed-but-unanswered slots time out only once armed */
    r.process_key = 1002;
    CHECK_EQ(sqfw_authorize(f.e, &r, 300 * MS, &d), SQFW_OK);
    CHECK_EQ(sqfw_pend_arm(f.e, d.pend_slot), SQFW_OK);
    CHECK(sqfw_pend_take_ready(f.e, 2300 * MS, &s, &v, &expired));
    CHECK_EQ(expired, 1);
    fx_close(&f);
}

TEST(engine_audit_mode_allows_and_reports)
{
    fx_engine f;
    open_policy(&f, 2);
    sqfw_request r = fx_req("\\device\\x\\unknown.exe", SQFW_DIR_OUTBOUND, 6, "1.1.1.1", 443);
    sqfw_decision d;
    sqfw_authorize(f.e, &r, 5, &d);
    /* unknown image with hash identities and pend-for-hash: asks the agent, allows meanwhile */
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK(d.flags & SQFW_DF_AUDIT);
    sqfw_event ev;
    CHECK(sqfw_next_event(f.e, &ev));
    CHECK_EQ(ev.type, SQFW_EV_NEW_IDENTITY);
    r = fx_req("\\device\\mup\\share\\tool.exe", SQFW_DIR_OUTBOUND, 17, "192.168.1.1", 80);
    sqfw_authorize(f.e, &r, 6, &d);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK(sqfw_next_event(f.e, &ev));
    CHECK_EQ(ev.type, SQFW_EV_AUDIT);
    CHECK_EQ(ev.reason, SQFW_R_NO_RULE);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.audited, 2);
    CHECK_EQ(st.blocked, 0);
    fx_close(&f);
}

TEST(engine_blocked_events_and_ring_overflow_counted)
{
    fx_engine f;
    open_policy(&f, 1);
    sqfw_decision d;
    for (int i = 0; i < 100; i++) {
        sqfw_request r = fx_req("\\device\\x\\malware.exe", SQFW_DIR_OUTBOUND, 6, "6.6.6.6", 4444);
        sqfw_authorize(f.e, &r, (uint64_t)i, &d);
        CHECK_EQ(d.verdict, SQFW_BLOCK);
    }
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.events_dropped, 100 - 64);
    sqfw_event ev;
    int n = 0;
    while (sqfw_next_event(f.e, &ev)) {
        CHECK_EQ(ev.type, SQFW_EV_BLOCKED);
        CHECK_EQ(ev.reason, SQFW_R_UNKNOWN_APP);
        CHECK_EQ(ev.remote_port, 4444);
        CHECK_EQ(ev.remote_addr[0], 6);
        n++;
    }
    CHECK_EQ(n, 64);
    fx_close(&f);
}

TEST(engine_explain_has_no_side_effects)
{
    fx_engine f;
    open_policy(&f, 1);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    fx_user(&r, SID);
    sqfw_decision d;
    for (int i = 0; i < 100; i++)
        sqfw_explain(f.e, &r, 1, &d);
    CHECK(d.flags & SQFW_DF_EXPLAIN);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.authorized, 0);
    /* curl's class allows 5 connections of burst: explain spent none */
    int allowed = 0;
    for (int i = 0; i < 10; i++) {
        sqfw_authorize(f.e, &r, 1, &d);
        allowed += d.verdict == SQFW_ALLOW;
    }
    CHECK_EQ(allowed, 5);
    CHECK_EQ(d.reason, SQFW_R_CLASS_RATE);
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.rate_limited, 5);
    /* the connection log: 5 allowed, then 5 rate drops, each with its tuple
     * and user; explain logged nothing */
    sqfw_event ev;
    int n_allowed = 0, n_rate = 0;
    while (sqfw_next_event(f.e, &ev)) {
        n_allowed += ev.type == SQFW_EV_ALLOWED;
        n_rate += ev.type == SQFW_EV_RATE && ev.reason == SQFW_R_CLASS_RATE;
        CHECK(ev.user_len == strlen(SID) && memcmp(ev.user, SID, ev.user_len) == 0);
        CHECK_EQ(ev.remote_port, 443);
        CHECK_EQ(ev.pid, 4242u);
        CHECK_EQ(ev.class_id, 2u);
    }
    CHECK_EQ(n_allowed, 5);
    CHECK_EQ(n_rate, 5);
    fx_close(&f);
}

/* Allowed connections and rate drops are logged within one budget per
 * engine, so a flood cannot fill the ring with them; the rest is counted. */
TEST(engine_connection_log_is_budgeted)
{
    fx_engine f;
    sqfw_limits l = fx_limits();
    l.max_events = 4096;
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    CHECK_EQ(fx_install(&f, golden_defs[1].policy, 1), SQFW_OK);
    sqfw_event ev;
    while (sqfw_next_event(f.e, &ev))
        ;
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    fx_user(&r, SID);
    r.local_addr[0] = 10, r.local_addr[3] = 5;
    r.local_port = 50000;
    sqfw_decision d;
    for (int i = 0; i < 2000; i++)
        sqfw_authorize(f.e, &r, 2, &d);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.allowed, 5u);
    CHECK_EQ(st.rate_limited, 1995u);
    CHECK_EQ(st.events_suppressed, 2000u - SQFW_CONN_LOG_BURST);
    uint32_t logged = 0;
    while (sqfw_next_event(f.e, &ev)) {
        logged++;
        CHECK(ev.local_port == 50000 && ev.local_addr[0] == 10 && ev.local_addr[3] == 5);
    }
    CHECK_EQ(logged, SQFW_CONN_LOG_BURST);
    CHECK_EQ(st.events_dropped, 0u);
    /* the budget refills with time */
    sqfw_authorize(f.e, &r, 2 + SEC, &d);
    CHECK_EQ(sqfw_next_event(f.e, &ev), 1);
    CHECK(ev.type == SQFW_EV_ALLOWED || ev.type == SQFW_EV_RATE);
    fx_close(&f);
}

TEST(engine_app_rate_limit_is_per_identity)
{
    fx_engine f;
    open_policy(&f, 1);
    sqfw_attest(f.e, 1000, sha_agent, 0);
    sqfw_request r = fx_req(AGENT, SQFW_DIR_OUTBOUND, 6, "10.20.1.1", 443);
    sqfw_decision d;
    int allowed = 0;
    for (int i = 0; i < 40; i++) {
        sqfw_authorize(f.e, &r, 1, &d);
        allowed += d.verdict == SQFW_ALLOW;
    }
    CHECK_EQ(allowed, 10); /* the agent identity's burst, below its class's 20 */
    CHECK_EQ(d.reason, SQFW_R_APP_RATE);
    sqfw_authorize(f.e, &r, 1 + 100 * MS, &d); /* 50/s refills 5 in 100 ms */
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    fx_close(&f);
}

TEST(engine_levels_drop_classes_and_cap_rates)
{
    fx_engine f;
    open_policy(&f, 1);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    fx_user(&r, SID);
    sqfw_decision d;
    CHECK_EQ(sqfw_set_level(f.e, 2, 10), SQFW_OK); /* level 2 admits classes 0 and 1 only */
    sqfw_authorize(f.e, &r, 11, &d);
    CHECK_EQ(d.verdict, SQFW_BLOCK);
    CHECK_EQ(d.reason, SQFW_R_LEVEL);
    CHECK_EQ(d.level, 2);
    sqfw_explain(f.e, &r, 11, &d);
    CHECK_EQ(d.reason, SQFW_R_LEVEL);
    sqfw_event ev;
    CHECK(sqfw_next_event(f.e, &ev));
    CHECK_EQ(ev.type, SQFW_EV_LEVEL);
    CHECK_EQ(ev.value, 2);
    CHECK_EQ(sqfw_set_level(f.e, 3, 12), SQFW_E_ARG);
    CHECK_EQ(sqfw_set_level(f.e, 0, 13), SQFW_OK);
    sqfw_authorize(f.e, &r, 14, &d);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.level_dropped, 1);
    CHECK_EQ(st.level, 0);
    CHECK_EQ(st.level_count, 3);
    fx_close(&f);
}

/* A flow of curl's whose class has spent its packet burst: the next packet
 * is deferred (d). Returns the class's index in the policy, -1 if absent. */
static int flow_with_spent_class(fx_engine *f, uint64_t flow_id, sqfw_decision *d)
{
    open_policy(f, 1);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    fx_user(&r, SID);
    CHECK_EQ(sqfw_flow_established(f->e, flow_id, &r, 0), SQFW_OK);
    for (int i = 0; i < 100; i++) /* class 2's packet burst */
        sqfw_packet(f->e, flow_id, 1000, 1, d);
    sqfw_packet(f->e, flow_id, 1000, 1, d);
    CHECK_EQ(d->verdict, SQFW_DEFER);
    for (uint32_t i = 0; i < f->e->pol->n_class; i++)
        if (f->e->pol->cls[i].id == d->class_id)
            return (int)i;
    return -1;
}

/* The shaper asks again for each queued packet until its class has tokens;
 * each such retry used to count as a new arrival, inflating the demand
 * QGuard's max-min allocation sees. */
TEST(engine_packet_retries_are_not_new_arrivals)
{
    fx_engine f;
    sqfw_decision d;
    int ci = flow_with_spent_class(&f, 78, &d);
    CHECK(ci >= 0);
    if (ci < 0)
        return;
    uint64_t arrivals = f.e->pol->cls[ci].pkt_arrivals;
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    uint64_t deferred = st.packets_deferred;
    for (int i = 0; i < 50; i++) {
        CHECK_EQ(sqfw_packet_retry(f.e, 78, 1000, 1, &d), SQFW_OK);
        CHECK_EQ(d.verdict, SQFW_DEFER);
    }
    CHECK_EQ(f.e->pol->cls[ci].pkt_arrivals, arrivals);
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.packets_deferred, deferred);
    CHECK_EQ(sqfw_packet_retry(f.e, 78, 1000, 1 + d.wait_ns, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_ALLOW); /* the retry still takes tokens */
    CHECK_EQ(f.e->pol->cls[ci].pkt_arrivals, arrivals);
    sqfw_packet(f.e, 78, 1000, 1 + d.wait_ns, &d);
    CHECK_EQ(f.e->pol->cls[ci].pkt_arrivals, arrivals + 1);
    fx_close(&f);
}

/* While a class has packets queued, a new one goes behind them: deferred
 * with tokens there for the taking (they are the queue's, FIFO), counted
 * as an arrival and a deferral, the tokens left for the queue's head. */
TEST(engine_packet_behind_a_queue_is_deferred_whatever_the_tokens)
{
    fx_engine f;
    sqfw_decision d;
    int ci = flow_with_spent_class(&f, 80, &d);
    uint64_t later = 1 + d.wait_ns; /* one token back */
    CHECK(ci >= 0);
    if (ci < 0)
        return;
    uint64_t arrivals = f.e->pol->cls[ci].pkt_arrivals, accepted = f.e->pol->cls[ci].pkt_accepted;
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    uint64_t deferred = st.packets_deferred;
    CHECK_EQ(sqfw_packet_behind(f.e, 80, 1000, later, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_DEFER);
    CHECK_EQ(d.reason, SQFW_R_SHAPED);
    CHECK_EQ(f.e->pol->cls[ci].pkt_arrivals, arrivals + 1);
    CHECK_EQ(f.e->pol->cls[ci].pkt_accepted, accepted);
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.packets_deferred, deferred + 1);
    /* the token is still there for the queue's head */
    CHECK_EQ(sqfw_packet_retry(f.e, 80, 1000, later, &d), SQFW_OK);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(sqfw_packet_behind(NULL, 80, 1000, later, &d), SQFW_E_ARG);
    fx_close(&f);
}

/* A deferred packet the glue cannot queue (class queue full) is dropped:
 * the stats must say dropped, not deferred. */
TEST(engine_unqueued_deferral_counts_as_dropped)
{
    fx_engine f;
    open_policy(&f, 1);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    fx_user(&r, SID);
    CHECK_EQ(sqfw_flow_established(f.e, 79, &r, 0), SQFW_OK);
    sqfw_decision d;
    for (int i = 0; i < 100; i++) /* class 2's packet burst */
        sqfw_packet(f.e, 79, 1000, 1, &d);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    uint64_t deferred = st.packets_deferred, dropped = st.packets_dropped;
    sqfw_packet(f.e, 79, 1000, 1, &d);
    CHECK_EQ(d.verdict, SQFW_DEFER);
    CHECK_EQ(sqfw_packet_unqueued(f.e), SQFW_OK);
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.packets_deferred, deferred);
    CHECK_EQ(st.packets_dropped, dropped + 1);
    CHECK_EQ(sqfw_packet_unqueued(NULL), SQFW_E_ARG);
    fx_close(&f);
}

TEST(engine_flows_shape_packets_by_class)
{
    fx_engine f;
    open_policy(&f, 1);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    fx_user(&r, SID);
    CHECK_EQ(sqfw_flow_established(f.e, 77, &r, 0), SQFW_OK);
    CHECK_EQ(sqfw_flow_established(f.e, 77, &r, 0), SQFW_E_FULL); /* same handle twice */
    uint32_t ident, cls;
    CHECK_EQ(sqfw_flow_lookup(f.e, 77, &ident, &cls), SQFW_OK);
    CHECK_EQ(ident, 2);
    CHECK_EQ(cls, 2);
    /* class 2: 1000 pkt/s burst 100; 2 MB/s burst 200000 bytes */
    sqfw_decision d;
    int passed = 0, deferred = 0;
    uint64_t wait = 0;
    for (int i = 0; i < 200; i++) {
        sqfw_packet(f.e, 77, 1000, 1, &d);
        if (d.verdict == SQFW_ALLOW)
            passed++;
        else if (d.verdict == SQFW_DEFER) {
            deferred++;
            wait = d.wait_ns;
        }
    }
    CHECK_EQ(passed, 100);
    CHECK_EQ(deferred, 100);
    CHECK(wait > 0 && wait <= 1 * MS + 1);
    sqfw_packet(f.e, 77, 1000, 1 + wait, &d);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    /* the packet bucket is empty again right after */
    sqfw_packet(f.e, 77, 1500, 1 + wait, &d);
    CHECK_EQ(d.verdict, SQFW_DEFER);
    /* packets of flows the driver never attributed pass unshaped */
    sqfw_packet(f.e, 12345, 100, 1, &d);
    CHECK_EQ(d.reason, SQFW_R_FLOW_UNKNOWN);

    /* reference counting: the context outlives one extra user */
    CHECK_EQ(sqfw_flow_ref(f.e, 77), SQFW_OK);
    CHECK_EQ(sqfw_flow_unref(f.e, 77), SQFW_OK);
    CHECK_EQ(sqfw_flow_lookup(f.e, 77, NULL, NULL), SQFW_OK);
    CHECK_EQ(sqfw_flow_unref(f.e, 77), SQFW_OK);
    CHECK_EQ(sqfw_flow_lookup(f.e, 77, NULL, NULL), SQFW_E_NOT_FOUND);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.flows_active, 0);
    CHECK_EQ(st.flows_created, 1);
    fx_close(&f);
}

TEST(engine_flow_pool_exhaustion_is_reported)
{
    fx_engine f;
    sqfw_limits l = fx_limits();
    l.max_flows = 8;
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    CHECK_EQ(fx_install(&f, golden_defs[1].policy, 1), SQFW_OK);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    int ok = 0;
    for (uint64_t i = 1; i <= 10; i++)
        ok += sqfw_flow_established(f.e, i, &r, 0) == SQFW_OK;
    CHECK_EQ(ok, 8);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.flows_failed, 2);
    fx_close(&f);
}

TEST(engine_policy_swap_keeps_flows_and_level)
{
    fx_engine f;
    open_policy(&f, 1);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    fx_user(&r, SID);
    CHECK_EQ(sqfw_flow_established(f.e, 5, &r, 0), SQFW_OK);
    CHECK_EQ(sqfw_set_level(f.e, 1, 1), SQFW_OK);
    CHECK_EQ(fx_install(&f, golden_defs[1].policy, 2), SQFW_OK);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.level, 1);
    sqfw_decision d;
    sqfw_packet(f.e, 5, 100, 3, &d);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.class_id, 2);
    /* a policy without class 2 maps the flow to the default class */
    CHECK_EQ(fx_install(&f, golden_defs[0].policy, 4), SQFW_OK);
    sqfw_packet(f.e, 5, 100, 5, &d);
    CHECK_EQ(d.class_id, 0);
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.level, 0); /* minimal has one level */
    CHECK_EQ(st.policy_serial, 1);
    fx_close(&f);
}
