#include <stddef.h>

#include "../core/bucket.h"
#include "../core/event_ring.h"
#include "../core/flow_table.h"
#include "../core/proc_cache.h"
#include "../core/share.h"
#include "../core/syn_table.h"
#include "fixture.h"
#include "test.h"

TEST(bucket_enforces_rate_and_burst)
{
    sq_rate r;
    sq_tokens t;
    sq_rate_init(&r, 100, 10); /* 100/s, burst 10 */
    sq_tokens_full(&t, &r, 0);
    int passed = 0;
    for (int i = 0; i < 50; i++)
        if (sq_conforms(&t, &r, 0, 1)) {
            sq_take(&t, &r, 1);
            passed++;
        }
    CHECK_EQ(passed, 10); /* only the burst at one instant */
    /* over 2 s at 1 ms steps, ~2 each ms offered: accepted = 200 (+ nothing saved) */
    passed = 0;
    for (uint64_t ms = 1; ms <= 2000; ms++)
        for (int k = 0; k < 2; k++)
            if (sq_conforms(&t, &r, ms * MS, 1)) {
                sq_take(&t, &r, 1);
                passed++;
            }
    CHECK(passed >= 199 && passed <= 201);
    CHECK_EQ(sq_wait_ns(&t, &r, 1) > 0, 1);
    CHECK(sq_wait_ns(&t, &r, 1) <= 10 * MS);
}

TEST(bucket_survives_huge_gaps_and_backward_time)
{
    sq_rate r;
    sq_tokens t;
    sq_rate_init(&r, 4000000000u, 4000000000u); /* extreme values must not overflow */
    sq_tokens_full(&t, &r, 5);
    sq_take(&t, &r, 4000000000u);
    CHECK(!sq_conforms(&t, &r, 5, 1));
    CHECK(sq_conforms(&t, &r, 5 + 1000ull * SEC * 1000, 4000000000u)); /* 1000000 s later: full, not wrapped */
    sq_rate_init(&r, 10, 1);
    sq_tokens_full(&t, &r, 10 * SEC);
    sq_take(&t, &r, 1);
    CHECK(!sq_conforms(&t, &r, 5 * SEC, 1)); /* time went backwards: no refill */
    CHECK(!sq_conforms(&t, &r, 10 * SEC + 50 * MS, 1));
    CHECK(sq_conforms(&t, &r, 10 * SEC + 100 * MS, 1));
    /* oversize cost is clamped to the burst instead of never conforming */
    sq_rate_init(&r, 1000, 1500);
    sq_tokens_full(&t, &r, 0);
    CHECK(sq_conforms(&t, &r, 0, 9000));
}

TEST(maxmin_share_is_weighted_and_work_conserving)
{
    uint32_t w[3] = {3, 1, 1};
    uint64_t want[3] = {10000, 10000, 100}, out[3];
    uint64_t total = sq_maxmin_share(3, 0x7, w, want, 1000, out);
    /* class 2 wants 100 < its fair 200: satisfied; 900 left split 3:1 */
    CHECK_EQ(out[2], 100);
    CHECK_EQ(out[0], 675);
    CHECK_EQ(out[1], 225);
    CHECK(total <= 1000);
    CHECK(total >= 998);
    /* a class that wants little leaves the rest to the others */
    uint64_t want2[3] = {50, 10000, 10000};
    sq_maxmin_share(3, 0x7, w, want2, 1000, out);
    CHECK_EQ(out[0], 50);
    CHECK_EQ(out[1], 475);
    CHECK_EQ(out[2], 475);
    /* classes not admitted get nothing and do not dilute the others */
    sq_maxmin_share(3, 0x1, w, want, 1000, out);
    CHECK_EQ(out[0], 1000);
    CHECK_EQ(out[1], 0);
    /* under capacity everyone gets what it wants */
    uint64_t small[3] = {10, 20, 30};
    sq_maxmin_share(3, 0x7, w, small, 1000, out);
    CHECK_EQ(out[0] + out[1] + out[2], 60);
}

TEST(flow_table_pool_is_bounded_and_recycles)
{
    sq_flow_table t;
    void *mem = malloc(sq_flow_table_bytes(100));
    sq_flow_table_init(&t, mem, 100);
    for (uint64_t i = 1; i <= 100; i++)
        CHECK(sq_flow_alloc(&t, i * 7919) != NULL);
    CHECK(sq_flow_alloc(&t, 999999) == NULL); /* pool exhausted: no growth */
    CHECK(sq_flow_alloc(&t, 7919) == NULL);   /* duplicate id refused */
    CHECK_EQ(t.active, 100);
    for (uint64_t i = 1; i <= 100; i += 2)
        sq_flow_free(&t, sq_flow_find(&t, i * 7919));
    CHECK_EQ(t.active, 50);
    CHECK(sq_flow_find(&t, 1 * 7919) == NULL);
    CHECK(sq_flow_find(&t, 2 * 7919) != NULL);
    for (uint64_t i = 0; i < 50; i++)
        CHECK(sq_flow_alloc(&t, 5000000 + i) != NULL);
    CHECK(sq_flow_alloc(&t, 6000000) == NULL);
    free(mem);
}

TEST(syn_table_keeps_proven_sources_under_spoofed_churn)
{
    sq_syn_table t;
    void *mem = malloc(sq_syn_table_bytes(64));
    sq_syn_table_init(&t, mem, 64, 42);
    sq_syn_table_reset(&t, 64);
    sq_rate r;
    sq_rate_init(&r, 5, 10);
    uint8_t good[16] = {192, 0, 2, 10};
    uint64_t k1, k2;
    sq_syn_key(good, 4, 32, &k1, &k2);
    sq_syn_entry *e = sq_syn_get(&t, 4, k1, k2, 1, &r, 1);
    CHECK(e != NULL);
    e->proven = 1;
    uint32_t untracked = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        uint8_t a[16] = {(uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
        uint64_t s1, s2;
        sq_syn_key(a, 4, 32, &s1, &s2);
        if (!sq_syn_get(&t, 4, s1, s2, 0, &r, 2 + i))
            untracked++;
    }
    sq_syn_entry *again = sq_syn_get(&t, 4, k1, k2, 0, &r, 200000);
    CHECK(again == e);
    CHECK(again->proven);
    CHECK_EQ(untracked, 0); /* unproven newcomers evict each other, never the proven */
    /* prefix aggregation: /24 keys collapse neighbours */
    uint8_t n1[16] = {198, 51, 100, 1}, n2[16] = {198, 51, 100, 200};
    uint64_t a1, a2, b1, b2;
    sq_syn_key(n1, 4, 24, &a1, &a2);
    sq_syn_key(n2, 4, 24, &b1, &b2);
    CHECK(a1 == b1 && a2 == b2);
    free(mem);
}

TEST(proc_cache_and_event_ring_are_bounded)
{
    sq_proc_cache c;
    void *mem = malloc(sq_proc_cache_bytes(16));
    sq_proc_cache_init(&c, mem, 16);
    uint8_t v[32] = {9};
    for (uint64_t k = 1; k <= 1000; k++)
        sq_proc_cache_put(&c, k, v, 32, k);
    int found = 0;
    for (uint64_t k = 1; k <= 1000; k++)
        found += sq_proc_cache_find(&c, k) != NULL;
    CHECK(found <= 16);
    CHECK(sq_proc_cache_find(&c, 1000) != NULL); /* newest survives */
    CHECK(!sq_proc_cache_put(&c, 5, v, 65, 1));      /* oversize refused */
    free(mem);

    sq_event_ring r;
    void *em = malloc(sq_event_ring_bytes(4));
    sq_event_ring_init(&r, em, 4);
    for (uint32_t i = 0; i < 4; i++)
        sq_event_ring_push(&r)->value = i;
    CHECK(sq_event_ring_push(&r) == NULL);
    sqfw_event ev;
    CHECK(sq_event_ring_pop(&r, &ev));
    CHECK_EQ(ev.value, 0);
    sq_event_ring_push(&r)->value = 4;
    uint32_t last = 0;
    while (sq_event_ring_pop(&r, &ev))
        last = ev.value;
    CHECK_EQ(last, 4);
    free(em);
}

/* The C# bridge (service/SieveQ.Firewall/Bridge/NativeCore.cs) mirrors these
 * layouts; a change here must change it too. */
_Static_assert(sizeof(sqfw_request) == 88, "sqfw_request ABI");
_Static_assert(offsetof(sqfw_request, remote_addr) == 72, "sqfw_request.remote_addr ABI");
_Static_assert(sizeof(sqfw_decision) == 40, "sqfw_decision ABI");
_Static_assert(sizeof(sqfw_limits) == 32, "sqfw_limits ABI");
_Static_assert(sizeof(sqfw_stats) == 192, "sqfw_stats ABI");
_Static_assert(sizeof(sqfw_event) == 544 && offsetof(sqfw_event, path) == 64 && offsetof(sqfw_event, user) == 344,
               "sqfw_event ABI");
