/* Discrete-time simulation of QGuard's scenarios against the real core.
 *
 * A: overload. A server that can handle CAPACITY connections/s is offered
 *    far more by a "standard" population than by a "preferred" one. A
 *    QGuard-style monitor (load from accepted rate, hysteresis) switches the
 *    filter hierarchy. The preferred class must keep >= 98% of its
 *    configured weighted share (or of its demand when it wants less), and
 *    the total accepted rate must stay under capacity. A control run that
 *    never leaves level 0 shows what happens without the hierarchy.
 * B: SYN flood from spoofed sources. A client that completed handshakes
 *    before the flood, and a new client from the preferred prefix, must
 *    still connect; a control run without SYN limits shows they would not.
 *
 * Time is simulated in 1 ms steps; nothing depends on the wall clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/policy_format.h"
#include "fixture.h"

#define CAPACITY 1000u /* server: connections per second */
#define STEP_MS 1ull
#define TICK_MS 100ull

static int failures;
#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            printf("  FAILED: " __VA_ARGS__);                                                                          \
            printf("\n");                                                                                              \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static uint64_t rng = 0x853c49e6748fea9bull;
static uint32_t rnd32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static const char SERVER[] = "\\device\\harddiskvolume2\\srv\\web.exe";

enum { STD = 0, PREF = 1 };

static const qb_class classes_a[] = {{.id = 0, .weight = 1}, {.id = 1, .weight = 3}};
static const qb_ident server_id[] = {{.id = 1, .kind = SQFW_KIND_IMAGE_PATH, .class_id = 0, .name = SERVER}};
static const qb_rule server_rules[] = {
    {.id = 1, .identity = 1, .family = 4, .prefix = 16, .proto = 6, .dir = SQFW_DIR_IN, .port_lo = 80,
     .port_hi = 80, .addr = {10, 1}, .class_id = 1},
    {.id = 2, .identity = 1, .family = 4, .prefix = 0, .proto = 6, .dir = SQFW_DIR_IN, .port_lo = 80, .port_hi = 80,
     .class_id = SQFW_CLASS_INHERIT},
};
/* Level 1 caps the total at capacity; level 2 halves it and admits only
 * the preferred class (QGuard's "more restrictive filter"). */
static const qb_level levels_a[] = {
    {.admit = 0x3}, {.conn_cap = CAPACITY, .admit = 0x3}, {.conn_cap = CAPACITY / 2, .admit = 0x2}};

static sqfw_request inbound(uint32_t src)
{
    sqfw_request r;
    memset(&r, 0, sizeof r);
    r.process_key = 7;
    r.path = (const uint8_t *)SERVER;
    r.path_len = sizeof SERVER - 1;
    r.direction = SQFW_DIR_INBOUND;
    r.protocol = 6;
    r.family = 4;
    r.local_port = 80;
    r.remote_addr[0] = (uint8_t)(src >> 24);
    r.remote_addr[1] = (uint8_t)(src >> 16);
    r.remote_addr[2] = (uint8_t)(src >> 8);
    r.remote_addr[3] = (uint8_t)src;
    return r;
}

typedef struct overload_result {
    double pref_rate, std_rate, total_rate, pref_served, share;
    uint32_t final_level, switches;
    uint64_t total_accepted, window_ms;
} overload_result;

/* QGuard monitor: load index = EWMA of accepted/capacity; up above 1.02,
 * down below 0.70 (hysteresis), with a hold time between switches. */
static overload_result run_overload(uint32_t pref_demand, uint32_t std_demand, int use_monitor)
{
    qb_policy p = {.serial = 100, .max_pended = 1, .pend_timeout_ms = 100, .loopback = SQFW_LOOPBACK_ENFORCE,
                   .ids = server_id, .n_ids = 1, .rules = server_rules, .n_rules = 2, .classes = classes_a,
                   .n_classes = 2, .levels = levels_a, .n_levels = 3};
    fx_engine f;
    sqfw_limits l = fx_limits();
    fx_open(&f, &l);
    fx_install(&f, &p, 1);

    const uint64_t total_ms = 40000, warm_ms = 10000;
    double acc_p = 0, acc_s = 0, load = 0;
    uint64_t win_pref = 0, win_std = 0, tick_accepted = 0, last_switch = 0;
    double served_pref = 0;
    overload_result res;
    memset(&res, 0, sizeof res);
    uint32_t level = 0;
    for (uint64_t ms = 1; ms <= total_ms; ms += STEP_MS) {
        uint64_t now = ms * MS;
        acc_p += pref_demand / 1000.0;
        acc_s += std_demand / 1000.0;
        uint32_t step_pref = 0, step_std = 0;
        while (acc_p >= 1 || acc_s >= 1) {
            /* interleave the populations fairly within the millisecond */
            int pick_pref = acc_p >= 1 && (acc_s < 1 || (rnd32() % 1000) < 1000 * acc_p / (acc_p + acc_s));
            uint32_t src = pick_pref ? (10u << 24 | 1u << 16 | (rnd32() % 400)) : (192u << 24 | 168u << 16 | (rnd32() % 5000));
            if (pick_pref)
                acc_p -= 1;
            else
                acc_s -= 1;
            sqfw_request r = inbound(src);
            sqfw_decision d;
            sqfw_authorize(f.e, &r, now, &d);
            if (d.verdict != SQFW_ALLOW)
                continue;
            tick_accepted++;
            if (pick_pref)
                step_pref++;
            else
                step_std++;
        }
        if (ms > warm_ms) {
            win_pref += step_pref;
            win_std += step_std;
            /* the server serves at most CAPACITY/s; excess is lost at random */
            double step_total = step_pref + step_std, cap_step = CAPACITY / 1000.0;
            served_pref += step_total > cap_step ? step_pref * cap_step / step_total : step_pref;
        }
        if (ms % TICK_MS == 0) {
            sqfw_tick(f.e, now);
            double rate = tick_accepted * (1000.0 / TICK_MS);
            tick_accepted = 0;
            load = 0.7 * load + 0.3 * (rate / CAPACITY);
            if (use_monitor && ms - last_switch >= 500) {
                if (load > 1.02 && level < 2) {
                    sqfw_set_level(f.e, ++level, now);
                    last_switch = ms;
                    res.switches++;
                } else if (load < 0.70 && level > 0) {
                    sqfw_set_level(f.e, --level, now);
                    last_switch = ms;
                    res.switches++;
                }
            }
        }
    }
    double secs = (total_ms - warm_ms) / 1000.0;
    res.pref_rate = win_pref / secs;
    res.std_rate = win_std / secs;
    res.total_rate = (win_pref + win_std) / secs;
    res.pref_served = served_pref / secs;
    res.total_accepted = win_pref + win_std;
    res.window_ms = total_ms - warm_ms;
    res.final_level = level;
    /* configured share at level 1: weight 3 of 4 of the cap */
    res.share = CAPACITY * 3.0 / 4.0;
    fx_close(&f);
    return res;
}

static void scenario_overload(void)
{
    printf("A. overload: capacity %u conn/s, preferred weight 3, standard weight 1\n", CAPACITY);
    overload_result a = run_overload(1000, 5000, 1);
    printf("  offered pref 1000/s std 5000/s -> level %u after %u switches; accepted pref %.1f/s std %.1f/s total "
           "%.1f/s (share %.0f)\n",
           a.final_level, a.switches, a.pref_rate, a.std_rate, a.total_rate, a.share);
    EXPECT(a.final_level >= 1, "monitor did not raise the level");
    EXPECT(a.pref_rate >= 0.98 * a.share, "preferred got %.1f/s < 98%% of share %.0f", a.pref_rate, a.share);
    EXPECT(a.total_rate <= CAPACITY, "total accepted %.1f/s above capacity", a.total_rate);

    overload_result b = run_overload(400, 5000, 1);
    printf("  offered pref 400/s std 5000/s  -> level %u; accepted pref %.1f/s std %.1f/s total %.1f/s\n",
           b.final_level, b.pref_rate, b.std_rate, b.total_rate);
    EXPECT(b.pref_rate >= 0.98 * 400, "preferred under its share got %.1f/s < 98%% of its 400/s", b.pref_rate);
    EXPECT(b.total_rate <= CAPACITY, "total accepted %.1f/s above capacity", b.total_rate);
    EXPECT(b.std_rate >= 0.9 * (CAPACITY - 400), "standard did not get the capacity preferred left (%.1f/s)",
           b.std_rate);

    overload_result c = run_overload(1000, 5000, 0);
    printf("  control without level switching: accepted %.1f/s, preferred served %.1f/s of %u capacity\n",
           c.total_rate, c.pref_served, CAPACITY);
    EXPECT(c.total_rate > CAPACITY, "control run was not overloaded");
    EXPECT(c.pref_served < 0.5 * a.share, "control shows no difference (preferred served %.1f/s)", c.pref_served);

    overload_result idle = run_overload(300, 300, 1);
    printf("  light load pref 300/s std 300/s -> level %u, accepted %.1f/s\n", idle.final_level, idle.total_rate);
    EXPECT(idle.final_level == 0, "monitor raised the level without overload");
    EXPECT(idle.total_rate >= 0.98 * 600, "light load was throttled");
}

typedef struct flood_result {
    uint32_t legit_tries, legit_ok, newcomer_tries, newcomer_ok, spoof_ok;
    uint64_t flood_ms, total_ok;
} flood_result;

static flood_result run_flood(int with_syn_limits)
{
    static const qb_class classes_b[] = {{.id = 0, .weight = 1, .conn_rate = 2000, .conn_burst = 200},
                                         {.id = 1, .weight = 3, .conn_rate = 2000, .conn_burst = 200}};
    static const qb_level levels_b[] = {{.admit = 0x3}};
    static const qb_syn syn = {.per_source_rate = 10, .per_source_burst = 20, .unproven_rate = 300,
                               .unproven_burst = 100, .slots = 65536, .v4_prefix = 32, .v6_prefix = 64};
    qb_policy p = {.serial = 200, .max_pended = 1, .pend_timeout_ms = 100, .loopback = SQFW_LOOPBACK_ENFORCE,
                   .ids = server_id, .n_ids = 1, .rules = server_rules, .n_rules = 2, .classes = classes_b,
                   .n_classes = 2, .levels = levels_b, .n_levels = 1, .syn = with_syn_limits ? &syn : NULL};
    fx_engine f;
    sqfw_limits l = fx_limits();
    l.max_syn_slots = 65536;
    l.max_flows = 200000;
    fx_open(&f, &l);
    fx_install(&f, &p, 1);
    flood_result res;
    memset(&res, 0, sizeof res);
    const uint32_t legit = 192u << 24 | 0u << 16 | 2u << 8 | 10u;   /* standard class, known before the flood */
    const uint32_t newcomer = 10u << 24 | 1u << 16 | 77u << 8 | 1u; /* preferred prefix, first seen during it */
    const uint64_t flood_start = 2000, flood_end = 12000, flood_rate = 50000;
    uint64_t flow_id = 1;
    double acc = 0;
    for (uint64_t ms = 1; ms <= 13000; ms++) {
        uint64_t now = ms * MS;
        int in_flood = ms >= flood_start && ms < flood_end;
        /* the flood arrives first: clients meet the buckets as it leaves them */
        if (in_flood) {
            acc += flood_rate / 1000.0;
            while (acc >= 1) {
                acc -= 1;
                uint32_t src = rnd32();
                if ((src >> 16) == (10u << 8 | 1u))
                    src ^= 1u << 31; /* spoofed addresses outside the preferred /16 */
                sqfw_request r = inbound(src);
                sqfw_decision d;
                sqfw_authorize(f.e, &r, now, &d);
                res.spoof_ok += d.verdict == SQFW_ALLOW; /* never completes a handshake */
            }
        }
        /* the known client connects 5 times per second throughout */
        if (ms % 200 == 0) {
            sqfw_request r = inbound(legit);
            sqfw_decision d;
            sqfw_authorize(f.e, &r, now, &d);
            if (in_flood) {
                res.legit_tries++;
                res.legit_ok += d.verdict == SQFW_ALLOW;
            }
            if (d.verdict == SQFW_ALLOW) {
                sqfw_flow_established(f.e, flow_id, &r, now); /* real client: handshake completes */
                sqfw_flow_unref(f.e, flow_id++);
            }
        }
        /* the newcomer tries once per second during the flood, TCP-style */
        if (in_flood && ms % 1000 == 500) {
            sqfw_request r = inbound(newcomer);
            sqfw_decision d;
            sqfw_authorize(f.e, &r, now, &d);
            res.newcomer_tries++;
            res.newcomer_ok += d.verdict == SQFW_ALLOW;
        }
        if (ms % TICK_MS == 0)
            sqfw_tick(f.e, now);
    }
    res.flood_ms = flood_end - flood_start;
    fx_close(&f);
    return res;
}

static void scenario_syn_flood(void)
{
    printf("B. SYN flood: 50000 SYN/s from spoofed sources for 10 s\n");
    flood_result a = run_flood(1);
    double spoof_rate = a.spoof_ok * 1000.0 / a.flood_ms;
    printf("  with SYN limits: known client %u/%u connected, new preferred client %u/%u, spoofed accepted %.1f/s\n",
           a.legit_ok, a.legit_tries, a.newcomer_ok, a.newcomer_tries, spoof_rate);
    EXPECT(a.legit_ok == a.legit_tries, "known client lost %u of %u connects", a.legit_tries - a.legit_ok,
           a.legit_tries);
    EXPECT(a.newcomer_ok == a.newcomer_tries, "new preferred client lost %u of %u connects",
           a.newcomer_tries - a.newcomer_ok, a.newcomer_tries);
    /* unproven budget: 300/s per class plus one burst of 100 */
    EXPECT(a.spoof_ok <= 300 * a.flood_ms / 1000 + 100, "flood not contained: %u spoofed SYNs accepted", a.spoof_ok);
    EXPECT(spoof_rate + 5 <= CAPACITY, "flood plus client above capacity");

    flood_result c = run_flood(0);
    printf("  control without SYN limits: known client %u/%u connected, spoofed accepted %.1f/s\n", c.legit_ok,
           c.legit_tries, c.spoof_ok * 1000.0 / c.flood_ms);
    EXPECT(c.legit_ok * 2 < c.legit_tries, "control shows no difference (%u/%u)", c.legit_ok, c.legit_tries);
}

int main(void)
{
    scenario_overload();
    scenario_syn_flood();
    printf("qguard-sim: %s\n", failures ? "FAILED" : "all scenario checks passed");
    return failures ? 1 : 0;
}
