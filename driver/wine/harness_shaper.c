/* TEST ONLY: the per-packet transport path of the real driver under Wine
 * (included by harness.c, whose CHECK, ioctl and helpers it uses).
 *
 * The stand-in calls the driver's transport classify functions with a
 * burst of packets of one flow; each decision is compared with the
 * portable core's for the same packets (a second engine in this process,
 * the same policy), then the deferred packets are re-injected and read back
 * from the stand-in's record of injections.
 *
 * Time: the driver reads the kernel's interrupt time, which the harness
 * cannot stop, so a slow class must earn no token while a check runs, on a
 * machine that may stall for seconds (a CI run beside the MSI check took
 * 3.6 s over the 17 bursts of total_bound_checks, and 2 packets/s then let
 * 58 queued packets out). A slow class is therefore a byte bucket of 1 B/s
 * holding exactly the first SLOW_BURST packets of the burst that follows
 * (lengths first, first+1, ...): the next packet needs first+SLOW_BURST
 * seconds (over 100 s) of tokens. The queue is then drained by pushing the
 * same policy with a fast class (a new policy starts with full buckets),
 * which the core replica does too. */
#include "../tests/blob_builder.h"
#include "standin_shaper_ioctl.h"

#define BULK_PATH "\\device\\harddiskvolume2\\tools\\bulk.exe"
#define BULK_PID 5100u
#define BULK_FLOW 0xF20u
#define BULK_REMOTE 0x0A1E0203u /* 10.30.2.3 */
#define BULK_LPORT 50500
#define SLOW_BURST 8u
#define QUEUE_BOUND 256u /* SQFW_MAX_QUEUED_PER_CLASS in wfp/glue.h */
#define LAYER_IN_V4 12u
#define LAYER_OUT_V4 16u

/* a shaped class's buckets, as pushed to the driver and the core replica */
typedef struct shape {
    uint32_t pkt_rate, pkt_burst, byte_rate, byte_burst;
} shape;

static shape slow_from(uint32_t first)
{
    return (shape){.byte_rate = 1, .byte_burst = SLOW_BURST * first + SLOW_BURST * (SLOW_BURST - 1) / 2};
}

static const shape FAST = {.pkt_rate = 100000, .pkt_burst = 1000};

static qb_class shaped_class(uint32_t id, shape s)
{
    return (qb_class){.id = id, .weight = 1, .pkt_rate = s.pkt_rate, .pkt_burst = s.pkt_burst,
                      .byte_rate = s.byte_rate, .byte_burst = s.byte_burst};
}

static UINT8 *shaper_blob(uint64_t serial, shape s, size_t *len)
{
    static const qb_ident ids[] = {{.id = 1, .kind = SQFW_KIND_IMAGE_PATH, .class_id = 2, .name = BULK_PATH}};
    static const qb_rule rules[] = {
        {.id = 1, .identity = 1, .family = 4, .prefix = 0, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 443,
         .port_hi = 443, .class_id = SQFW_CLASS_INHERIT},
    };
    qb_class classes[] = {{.id = 0, .weight = 1}, shaped_class(2, s)};
    static const qb_level levels[] = {{.admit = 0x3}};
    qb_policy p = {.serial = serial, .default_action = SQFW_ACTION_ENFORCE, .loopback = SQFW_LOOPBACK_ALLOW,
                   .dns = SQFW_DNS_BY_RULES, .unknown_image = SQFW_UNKNOWN_BLOCK, .max_pended = 8,
                   .pend_timeout_ms = 2000, .ids = ids, .n_ids = 1, .rules = rules, .n_rules = 1,
                   .classes = classes, .n_classes = 2, .levels = levels, .n_levels = 1};
    return qb_build_alloc(&p, len);
}

/* the core replica: its own engine, the same policies, the same packets */
static sqfw_engine *replica;
static uint64_t replica_now = 1000000000ull;

static int replica_install(const UINT8 *blob, size_t len)
{
    size_t need = 0;
    uint32_t off = 0;
    sqfw_policy *p = NULL, *old = NULL;
    return sqfw_policy_arena_size(blob, len, &need, &off) == SQFW_OK &&
           sqfw_policy_compile(blob, len, malloc(need), need, &p, &off) == SQFW_OK &&
           sqfw_engine_install(replica, p, replica_now, &old) == SQFW_OK;
}

/* Pushes the policy to the driver and installs it in the replica. */
static int install_both(HANDLE h, uint64_t serial, shape s)
{
    size_t len = 0;
    UINT8 *blob = shaper_blob(serial, s, &len);
    sqfw_set_policy_out res;
    int ok = blob && push(h, blob, (DWORD)len, &res) == 0 && res.status == SQFW_OK && replica_install(blob, len);
    free(blob);
    return ok;
}

static sqfw_request bulk_request(void)
{
    sqfw_request r;
    memset(&r, 0, sizeof r);
    r.process_key = SQFW_PROCESS_KEY(BULK_PID, 0);
    r.path = (const uint8_t *)BULK_PATH;
    r.path_len = (uint32_t)strlen(BULK_PATH);
    r.pid = BULK_PID;
    r.direction = SQFW_DIR_OUTBOUND;
    r.protocol = 6;
    r.family = 4;
    r.remote_port = 443;
    r.local_port = BULK_LPORT;
    r.remote_addr[0] = 10, r.remote_addr[1] = 30, r.remote_addr[2] = 2, r.remote_addr[3] = 3;
    r.local_addr[0] = 10, r.local_addr[3] = 5;
    return r;
}

static sq_packets_in packets_req(uint32_t callout, uint32_t layer, uint32_t count, uint32_t first_len, uint32_t mark)
{
    sq_packets_in pi;
    memset(&pi, 0, sizeof pi);
    pi.callout = callout, pi.layer_id = layer, pi.flow_handle = BULK_FLOW, pi.count = count;
    pi.first_len = first_len, pi.mark = mark, pi.protocol = 6, pi.family = 4;
    pi.local_port = BULK_LPORT, pi.remote_port = 443, pi.local_addr = 0x0A000005u, pi.remote_addr = BULK_REMOTE;
    pi.if_index = 7, pi.sub_if_index = 3, pi.compartment = 1, pi.ip_header_size = 20, pi.transport_header_size = 20;
    pi.endpoint = 0xE0E0;
    return pi;
}

static sq_packets_out send_packets(HANDLE h, const sq_packets_in *pi)
{
    static sq_packets_out po;
    memset(&po, 0, sizeof po);
    if (ioctl(h, IOCTL_STANDIN_PACKETS, pi, sizeof *pi, &po, sizeof po, NULL) != 0)
        po.count = 0;
    return po;
}

/* The ALE flow-established classify of an outbound TCP flow to BULK_REMOTE:443 (it associates the driver's flow
 * context at both transport layers). */
static sq_classify_in flow_established_in(const char *path, uint32_t pid, uint64_t flow, uint16_t local_port)
{
    sq_classify_in ci;
    memset(&ci, 0, sizeof ci);
    ci.callout = SQ_C_FLOW_V4, ci.layer_id = 52, ci.protocol = 6, ci.local_addr = 0x0A000005u;
    ci.remote_addr = BULK_REMOTE, ci.local_port = local_port, ci.remote_port = 443, ci.pid = pid;
    ci.flow_handle = flow, ci.direction = 0 /* FWP_DIRECTION_OUTBOUND */;
    for (size_t i = 0; path[i]; i++)
        ci.path[i] = (uint16_t)(unsigned char)path[i];
    ci.path_bytes = (uint32_t)(2 * strlen(path));
    return ci;
}

/* Collected injections, in the order the driver made them. */
static sq_injection seen[2 * SQ_MAX_INJECTIONS];
static uint32_t n_seen, seen_lost;

static void take_injections(HANDLE h)
{
    static sq_injections got;
    memset(&got, 0, sizeof got);
    if (ioctl(h, IOCTL_STANDIN_INJECTIONS, NULL, 0, &got, sizeof got, NULL) != 0)
        return;
    seen_lost += got.lost;
    for (uint32_t i = 0; i < got.count && i < SQ_MAX_INJECTIONS && n_seen < 2 * SQ_MAX_INJECTIONS; i++)
        seen[n_seen++] = got.rec[i];
}

static int wait_injections(HANDLE h, uint32_t want)
{
    for (int i = 0; i < 300 && n_seen < want; i++) {
        take_injections(h);
        if (n_seen < want)
            Sleep(10);
    }
    return n_seen >= want;
}

/* What the driver should answer packet by packet, from the replica's
 * decisions and the class queue's bound; returns the mismatches. */
static uint32_t compare_burst(uint64_t flow, const sq_packets_out *po, uint32_t count, uint32_t first_len,
                              uint32_t *queued, uint32_t counts_out[3])
{
    uint32_t mismatches = 0;
    for (uint32_t i = 0; i < count; i++) {
        sqfw_decision d;
        sqfw_packet(replica, flow, first_len + i, replica_now, &d);
        uint8_t want = SQ_OUT_BLOCK;
        if (d.verdict == SQFW_ALLOW) {
            want = SQ_OUT_PERMIT;
        } else if (d.verdict == SQFW_DEFER && *queued < QUEUE_BOUND) {
            want = SQ_OUT_ABSORB;
            (*queued)++;
        } else if (d.verdict == SQFW_DEFER) {
            sqfw_packet_unqueued(replica); /* the tail drop, as the driver counts it */
        }
        if (i >= po->count || po->result[i] != want) {
            if (mismatches++ < 3)
                printf("  packet %u: driver %u, core %u (verdict %u)\n", i, i < po->count ? po->result[i] : 0, want,
                       d.verdict);
        }
        counts_out[want == SQ_OUT_PERMIT ? 0 : want == SQ_OUT_ABSORB ? 1 : 2]++;
    }
    return mismatches;
}

/* The replica's queue drained under a fast class: every retry permitted. */
static void replica_drain(uint64_t flow, uint32_t *queued, const uint32_t *lens, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        sqfw_decision d;
        sqfw_packet_retry(replica, flow, lens[i], replica_now, &d);
    }
    *queued = 0;
}

static int same_packet_stats(HANDLE h, const sqfw_stats *base)
{
    sqfw_stats d = stats(h), r;
    sqfw_get_stats(replica, &r);
    int ok = d.packets_passed - base->packets_passed == r.packets_passed &&
             d.packets_deferred - base->packets_deferred == r.packets_deferred &&
             d.packets_dropped - base->packets_dropped == r.packets_dropped;
    printf("  driver packets passed/deferred/dropped +%llu/+%llu/+%llu, core %llu/%llu/%llu\n",
           (unsigned long long)(d.packets_passed - base->packets_passed),
           (unsigned long long)(d.packets_deferred - base->packets_deferred),
           (unsigned long long)(d.packets_dropped - base->packets_dropped), (unsigned long long)r.packets_passed,
           (unsigned long long)r.packets_deferred, (unsigned long long)r.packets_dropped);
    return ok;
}

/* (f) the bound over every class: 17 flows in 17 slow classes, each
 * bursting over its own class's bound; 16 full class queues hold all
 * SQFW_MAX_QUEUED_TOTAL records, so the 17th flow's packets are dropped
 * although its class queue is empty. Then the classes are made fast and
 * every record comes back. */
#define TOTAL_FLOWS 17u
#define TOTAL_BOUND 4096u /* SQFW_MAX_QUEUED_TOTAL in wfp/glue.h */

static char total_paths[TOTAL_FLOWS][64];

static int install_many(HANDLE h, uint64_t serial, shape s)
{
    qb_ident ids[TOTAL_FLOWS];
    qb_rule rules[TOTAL_FLOWS];
    qb_class classes[TOTAL_FLOWS + 1];
    classes[0] = (qb_class){.id = 0, .weight = 1};
    for (uint32_t k = 0; k < TOTAL_FLOWS; k++) {
        snprintf(total_paths[k], sizeof total_paths[k], "\\device\\harddiskvolume2\\tools\\bulk%02u.exe", k);
        ids[k] = (qb_ident){.id = 10 + k, .kind = SQFW_KIND_IMAGE_PATH, .class_id = 20 + k, .name = total_paths[k]};
        rules[k] = (qb_rule){.id = 10 + k, .identity = 10 + k, .family = 4, .prefix = 0, .proto = 6,
                             .dir = SQFW_DIR_OUT, .port_lo = 443, .port_hi = 443, .class_id = SQFW_CLASS_INHERIT};
        classes[k + 1] = shaped_class(20 + k, s);
    }
    static const qb_level levels[] = {{.admit = (1ull << (TOTAL_FLOWS + 1)) - 1}}; /* every class record */
    qb_policy p = {.serial = serial, .default_action = SQFW_ACTION_ENFORCE, .loopback = SQFW_LOOPBACK_ALLOW,
                   .dns = SQFW_DNS_BY_RULES, .unknown_image = SQFW_UNKNOWN_BLOCK, .max_pended = 8,
                   .pend_timeout_ms = 2000, .ids = ids, .n_ids = TOTAL_FLOWS, .rules = rules,
                   .n_rules = TOTAL_FLOWS, .classes = classes, .n_classes = TOTAL_FLOWS + 1, .levels = levels,
                   .n_levels = 1};
    size_t len = 0;
    UINT8 *blob = qb_build_alloc(&p, &len);
    sqfw_set_policy_out res;
    int ok = blob && push(h, blob, (DWORD)len, &res) == 0 && res.status == SQFW_OK;
    free(blob);
    return ok;
}

static void total_bound_checks(HANDLE h)
{
    CHECK("17 slow classes (1 B/s, a bucket of 8 packets), one flow each, pushed", install_many(h, 70, slow_from(100)));
    sq_counts c0 = counts(h);
    uint32_t established = 0, absorbed[TOTAL_FLOWS], blocked[TOTAL_FLOWS];
    for (uint32_t k = 0; k < TOTAL_FLOWS; k++) {
        sq_classify_in ci = flow_established_in(total_paths[k], 5300 + k, 0xF40u + k, (uint16_t)(51000 + k));
        sq_classify_out co;
        established += ioctl(h, IOCTL_STANDIN_CLASSIFY, &ci, sizeof ci, &co, sizeof co, NULL) == 0 &&
                       co.action == ACTION_PERMIT;
        sq_packets_in pi = packets_req(SQ_C_OUT_V4, LAYER_OUT_V4, SLOW_BURST + QUEUE_BOUND, 100, 0);
        pi.flow_handle = 0xF40u + k, pi.local_port = (uint16_t)(51000 + k);
        sq_packets_out po = send_packets(h, &pi);
        absorbed[k] = blocked[k] = 0;
        for (uint32_t i = 0; i < po.count; i++) {
            absorbed[k] += po.result[i] == SQ_OUT_ABSORB;
            blocked[k] += po.result[i] == SQ_OUT_BLOCK;
        }
    }
    CHECK("17 flows established", established == TOTAL_FLOWS);
    uint32_t full = 0, total = 0;
    for (uint32_t k = 0; k + 1 < TOTAL_FLOWS; k++)
        full += absorbed[k] == QUEUE_BOUND && blocked[k] == 0;
    for (uint32_t k = 0; k < TOTAL_FLOWS; k++)
        total += absorbed[k];
    printf("  %u packets deferred over 17 classes; the 17th flow: %u deferred, %u dropped\n", total,
           absorbed[TOTAL_FLOWS - 1], blocked[TOTAL_FLOWS - 1]);
    CHECK("16 flows fill their class queues (256 each): 4096 deferred, the bound over every class", full == 16 &&
                                                                                                     total == TOTAL_BOUND);
    CHECK("the 17th flow, its class queue empty, has its 256 over-rate packets dropped (none deferred)",
          absorbed[TOTAL_FLOWS - 1] == 0 && blocked[TOTAL_FLOWS - 1] == QUEUE_BOUND);
    sq_counts c1 = counts(h);
    CHECK("no clone kept for a dropped packet", (c1.clones - c1.clones_freed) - (c0.clones - c0.clones_freed) ==
                                                    TOTAL_BOUND);
    CHECK("fast classes pushed (every queue drains)", install_many(h, 71, FAST));
    sq_counts c2 = c1;
    for (int i = 0; i < 500 && (c2.clones - c2.clones_freed) != (c0.clones - c0.clones_freed); i++) {
        Sleep(20);
        c2 = counts(h);
    }
    take_injections(h);
    n_seen = 0, seen_lost = 0; /* more than the stand-in records: only the clones are counted here */
    CHECK("all 4096 re-injected and their clones freed (every record back in the array)",
          (c2.clones - c2.clones_freed) == (c0.clones - c0.clones_freed) && c2.clones - c0.clones == TOTAL_BOUND);
}

static void shaper_checks(HANDLE h)
{
    sqfw_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_flows = 64, lim.max_syn_slots = 64, lim.max_attest = 8, lim.max_services = 4, lim.max_events = 64;
    lim.seed = 1;
    size_t size = sqfw_engine_size(&lim);
    CHECK("core replica created", sqfw_engine_init(malloc(size), size, &lim, &replica) == SQFW_OK);
    sqfw_stats base = stats(h);
    CHECK("slow shaping policy (class 2: 1 B/s, a bucket of 8 packets) pushed", install_both(h, 77, slow_from(100)));

    /* the flow: ALE flow established attaches its context at both transport layers */
    sq_counts c0 = counts(h);
    sq_classify_in ci = flow_established_in(BULK_PATH, BULK_PID, BULK_FLOW, BULK_LPORT);
    sq_classify_out co;
    sqfw_request r = bulk_request();
    CHECK("bulk flow established at both transport layers",
          ioctl(h, IOCTL_STANDIN_CLASSIFY, &ci, sizeof ci, &co, sizeof co, NULL) == 0 && co.action == ACTION_PERMIT &&
              counts(h).flow_associated == c0.flow_associated + 2 &&
              sqfw_flow_established(replica, BULK_FLOW, &r, replica_now) == SQFW_OK);
    uint32_t class_id = 0;
    sqfw_flow_lookup(replica, BULK_FLOW, NULL, &class_id);
    CHECK("the core puts the flow in class 2", class_id == 2);

    /* (a, b) a burst over the class's rate at OUTBOUND_TRANSPORT_V4 */
    const uint32_t extra = 6, n = SLOW_BURST + QUEUE_BOUND + extra, first = 100;
    sq_counts c1 = counts(h);
    sq_packets_in pi = packets_req(SQ_C_OUT_V4, LAYER_OUT_V4, n, first, 0);
    sq_packets_out po = send_packets(h, &pi);
    printf("  outbound burst of %u packets classified in %.1f ms of the driver's clock\n", po.count,
           (double)po.elapsed_ns / 1e6);
    CHECK("every packet of the burst classified", po.count == n);
    uint32_t queued = 0, tally[3] = {0, 0, 0};
    uint32_t mismatches = compare_burst(BULK_FLOW, &po, n, first, &queued, tally);
    CHECK("each packet's decision is the core's (permit / absorbed and queued / dropped)", mismatches == 0);
    uint32_t got[3] = {0, 0, 0};
    for (uint32_t i = 0; i < po.count; i++)
        got[po.result[i] == SQ_OUT_PERMIT ? 0 : po.result[i] == SQ_OUT_ABSORB ? 1 : 2]++;
    printf("  driver: %u permitted, %u deferred, %u dropped; core: %u, %u, %u\n", got[0], got[1], got[2], tally[0],
           tally[1], tally[2]);
    CHECK("the burst's first 8 permitted at once, 256 deferred (the queue bound), 6 dropped",
          got[0] == SLOW_BURST && got[1] == QUEUE_BOUND && got[2] == extra && po.result[0] == SQ_OUT_PERMIT &&
              po.result[SLOW_BURST] == SQ_OUT_ABSORB && po.result[n - 1] == SQ_OUT_BLOCK);
    CHECK("originals left where they came (absorbed ones included)", po.moved == 0);
    sq_counts c2 = counts(h);
    /* a tail-dropped packet's clone is made before the queue is found full, and freed at once */
    CHECK("one clone kept per deferred packet",
          (c2.clones - c2.clones_freed) - (c1.clones - c1.clones_freed) == QUEUE_BOUND);
    /* the records come from the array taken at load; only WFP's clones are allocated per packet */
    CHECK("the burst asked the driver's pool allocator for nothing (256 packets deferred, 0 pool blocks)",
          c2.pool_allocs == c1.pool_allocs && c2.pool_frees == c1.pool_frees);
    CHECK("driver stats equal the core's: the tail drops counted as dropped, not deferred",
          same_packet_stats(h, &base));

    /* (c) the worker asks again for the queue's head every 100 ms: retries, not arrivals */
    Sleep(350);
    sqfw_stats s1 = stats(h);
    CHECK("after 350 ms of the worker's retries the deferred count has not grown",
          s1.packets_deferred - base.packets_deferred == QUEUE_BOUND);

    /* a packet we injected comes through the layer again: permitted, not charged */
    take_injections(h);
    uint32_t before_self = n_seen;
    sq_packets_in self = packets_req(SQ_C_OUT_V4, LAYER_OUT_V4, 3, 2000, SQ_PKT_INJECTED_BY_SELF);
    sq_packets_out so = send_packets(h, &self);
    sqfw_stats s2 = stats(h);
    CHECK("re-injected packets (FWPS_PACKET_INJECTED_BY_SELF) permitted, with the class's tokens spent",
          so.count == 3 && so.result[0] == SQ_OUT_PERMIT && so.result[1] == SQ_OUT_PERMIT &&
              so.result[2] == SQ_OUT_PERMIT);
    CHECK("and not counted again (passed, deferred, dropped unchanged; no clone)",
          s2.packets_passed == s1.packets_passed && s2.packets_deferred == s1.packets_deferred &&
              s2.packets_dropped == s1.packets_dropped && counts(h).clones == c2.clones);

    /* drain: the same class made fast; every deferred packet goes out, in order */
    uint32_t lens[QUEUE_BOUND];
    for (uint32_t i = 0; i < QUEUE_BOUND; i++)
        lens[i] = first + SLOW_BURST + i;
    CHECK("fast policy pushed (the queue drains)", install_both(h, 78, FAST));
    replica_drain(BULK_FLOW, &queued, lens, QUEUE_BOUND);
    CHECK("all 256 deferred packets re-injected", wait_injections(h, before_self + QUEUE_BOUND) && seen_lost == 0);
    uint32_t in_order = 0, well_sent = 0;
    for (uint32_t i = 0; i < QUEUE_BOUND && before_self + i < n_seen; i++) {
        const sq_injection *j = &seen[before_self + i];
        in_order += j->data_len == lens[i];
        /* 10.30.2.3 in network order; the compartment, endpoint and family the classify had */
        well_sent += !j->receive && j->handle_ok && j->family == 2 && j->compartment == 1 && j->endpoint == 0xE0E0 &&
                     j->offset_back == 0 && j->remote[0] == 10 && j->remote[1] == 30 && j->remote[2] == 2 &&
                     j->remote[3] == 3;
    }
    printf("  %u re-injected in arrival order, %u sent to 10.30.2.3 in compartment 1 with the endpoint\n", in_order,
           well_sent);
    CHECK("re-injected in the order they came", in_order == QUEUE_BOUND);
    CHECK("send-injected to the packet's remote address (network order), compartment, endpoint, at its offset",
          well_sent == QUEUE_BOUND);
    Sleep(50);
    sq_counts c3 = counts(h);
    CHECK("every injected clone completed and freed", c3.clones_freed - c2.clones_freed == QUEUE_BOUND &&
                                                           c3.clones == c2.clones);
    CHECK("after the drain the driver's counts equal the core's (retries not counted as arrivals)",
          same_packet_stats(h, &base));

    /* (d) inbound: deferred and receive-injected at the IP header on the arrival interface;
     * IPsec-protected and ALE-classify-required packets are permitted untouched */
    CHECK("slow policy again", install_both(h, 79, slow_from(200)));
    n_seen = 0;
    const uint32_t n_in = SLOW_BURST + 4, first_in = 200;
    sq_packets_in ii = packets_req(SQ_C_IN_V4, LAYER_IN_V4, n_in, first_in, 0);
    po = send_packets(h, &ii);
    memset(tally, 0, sizeof tally);
    CHECK("inbound burst: each decision the core's (8 permitted, 4 deferred)",
          po.count == n_in && compare_burst(BULK_FLOW, &po, n_in, first_in, &queued, tally) == 0 &&
              tally[0] == SLOW_BURST && tally[1] == 4);
    CHECK("inbound originals put back where they came (the clone was moved, not the packet)", po.moved == 0);
    sqfw_stats s3 = stats(h);
    sq_counts c4 = counts(h);
    sq_packets_in ip = packets_req(SQ_C_IN_V4, LAYER_IN_V4, 3, 300, SQ_PKT_IPSEC);
    sq_packets_out ipo = send_packets(h, &ip);
    sq_packets_in ar = packets_req(SQ_C_IN_V4, LAYER_IN_V4, 3, 300, SQ_PKT_ALE_REQUIRED);
    sq_packets_out aro = send_packets(h, &ar);
    sqfw_stats s4 = stats(h);
    int all_permit = ipo.count == 3 && aro.count == 3;
    for (uint32_t i = 0; i < 3; i++)
        all_permit = all_permit && ipo.result[i] == SQ_OUT_PERMIT && aro.result[i] == SQ_OUT_PERMIT;
    CHECK("IPsec-protected and ALE-classify-required inbound packets permitted with the class out of tokens",
          all_permit);
    CHECK("and untouched: not charged, not deferred, not cloned",
          s4.packets_passed == s3.packets_passed && s4.packets_deferred == s3.packets_deferred &&
              counts(h).clones == c4.clones && ipo.moved == 0 && aro.moved == 0);
    sq_packets_in nc = packets_req(SQ_C_IN_V4, LAYER_IN_V4, 1, 300, SQ_PKT_NO_CONTEXT);
    sq_packets_out nco = send_packets(h, &nc);
    CHECK("a packet of a flow without our context (older than the driver) permitted",
          nco.count == 1 && nco.result[0] == SQ_OUT_PERMIT);
    CHECK("fast policy: the inbound queue drains", install_both(h, 80, FAST));
    uint32_t in_lens[4] = {first_in + 8, first_in + 9, first_in + 10, first_in + 11};
    replica_drain(BULK_FLOW, &queued, in_lens, 4);
    CHECK("4 receive-injections", wait_injections(h, 4) && n_seen == 4);
    uint32_t well_recv = 0;
    for (uint32_t i = 0; i < n_seen && i < 4; i++) {
        const sq_injection *j = &seen[i];
        well_recv += j->receive && j->handle_ok && j->family == 2 && j->if_index == 7 && j->sub_if_index == 3 &&
                     j->compartment == 1 && j->offset_back == 40 && j->data_len == in_lens[i] + 40;
    }
    CHECK("on the arrival interface 7/3, compartment 1, moved back over IP+TCP (40 bytes), in order",
          well_recv == 4);
    CHECK("inbound: the driver's counts equal the core's", same_packet_stats(h, &base));

    /* (e) leave packets deferred for the unload that follows this run (run.sh prints its balance line;
     * the --loop run checks every line, and shaper_unload_check one cycle of its own) */
    CHECK("slow policy for the unload", install_both(h, 81, slow_from(400)));
    pi = packets_req(SQ_C_OUT_V4, LAYER_OUT_V4, SLOW_BURST + 20, 400, 0);
    po = send_packets(h, &pi);
    uint32_t left = 0;
    for (uint32_t i = 0; i < po.count; i++)
        left += po.result[i] == SQ_OUT_ABSORB;
    CHECK("20 packets left deferred for the unload", left == 20);
}

/* harness_v6.c */
static int v6_install(HANDLE h, uint64_t serial, shape s);
static uint32_t v6_defer_for_unload(HANDLE h);

/* One load whose unload finds packets deferred, of a v4 and a v6 flow: every
 * clone freed, every pool block and flow context returned. */
static void shaper_unload_check(SC_HANDLE svc)
{
    char last[512] = "";
    int leaky, bad, before = log_lines(&leaky, &bad, last, sizeof last);
    int started = StartServiceW(svc, 0, NULL) && svc_wait(svc, SERVICE_RUNNING);
    CHECK("shaper cycle: the driver loads", started);
    if (!started)
        return;
    HANDLE h = open_device();
    uint32_t left = 0, left6 = 0;
    uint64_t clones = 0;
    if (h != INVALID_HANDLE_VALUE) {
        sqfw_limits lim;
        memset(&lim, 0, sizeof lim);
        lim.max_flows = 64, lim.max_syn_slots = 64, lim.max_attest = 8, lim.max_services = 4, lim.max_events = 64;
        lim.seed = 1;
        size_t size = sqfw_engine_size(&lim);
        void *mem = malloc(size);
        sqfw_engine_init(mem, size, &lim, &replica);
        v6_install(h, 90, slow_from(100)); /* the bulk rule and the v6 ones */
        sq_classify_in ci = flow_established_in(BULK_PATH, BULK_PID, BULK_FLOW, BULK_LPORT);
        sq_classify_out co;
        ioctl(h, IOCTL_STANDIN_CLASSIFY, &ci, sizeof ci, &co, sizeof co, NULL);
        sq_packets_in pi = packets_req(SQ_C_OUT_V4, LAYER_OUT_V4, SLOW_BURST + 30, 100, 0);
        sq_packets_out po = send_packets(h, &pi);
        sq_packets_in ii = packets_req(SQ_C_IN_V4, LAYER_IN_V4, 10, 100, 0);
        sq_packets_out pio = send_packets(h, &ii);
        for (uint32_t i = 0; i < po.count; i++)
            left += po.result[i] == SQ_OUT_ABSORB;
        for (uint32_t i = 0; i < pio.count; i++)
            left += pio.result[i] == SQ_OUT_ABSORB;
        left6 = v6_defer_for_unload(h);
        clones = counts(h).clones;
        CloseHandle(h);
        free(mem);
        replica = NULL;
    }
    SERVICE_STATUS st;
    ControlService(svc, SERVICE_CONTROL_STOP, &st);
    svc_wait(svc, SERVICE_STOPPED);
    Sleep(200);
    int after = log_lines(&leaky, &bad, last, sizeof last);
    char want[64];
    snprintf(want, sizeof want, " clones=%llu/%llu ", (unsigned long long)clones, (unsigned long long)clones);
    printf("  unload with %u v4 and %u v6 packets deferred: %s", left, left6, last);
    CHECK("shaper cycle: 40 v4 packets (30 outbound, 10 inbound) deferred at unload", left == 40);
    CHECK("shaper cycle: 26 v6 packets (20 outbound, 6 inbound) deferred behind them", left6 == 26 &&
                                                                                         clones == 66);
    CHECK("shaper cycle: the unload freed every deferred clone, both flows' contexts (v4 and v6 layers) and every "
          "pool block (leak=0)",
          after == before + 1 && leaky == 0 && strstr(last, want) && strstr(last, "flows=4/4"));
}
