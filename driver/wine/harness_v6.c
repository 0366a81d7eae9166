/* TEST ONLY: the IPv6 classify functions of the real driver under Wine
 * (included by harness.c after harness_shaper.c, whose core replica, packet
 * requests and record of injections it uses).
 *
 * The IPv4 checks' paths again, through the _V6 layers with what WFP gives
 * there: addresses as FWP_BYTE_ARRAY16_TYPE (16 bytes, network order), the
 * remote scope id in the metadata, a 40-byte IP header. Each decision is
 * compared with the portable core's for the same request (the replica
 * engine, the same policy); re-injections are read back with the family,
 * address, scope id, interface and offset the injection API wants. */

#define V6_APP "\\device\\harddiskvolume2\\tools\\web6.exe"      /* named by path: class 2 */
#define V6_SIGNED "\\device\\harddiskvolume2\\tools\\signed6.exe" /* path + SHA-256: pended until attested */
#define V6_STRANGER "\\device\\harddiskvolume2\\tools\\stranger6.exe" /* named by nothing */
#define V6_FLOW 0xF60u
#define V6_SCOPE 11u /* the zone (interface) of the link-local peer */
#define V6_LPORT 50600
#define V6_IP_HEADER 40u
#define V6_TCP_HEADER 20u
#define LAYER_IN_V6 14u
#define LAYER_OUT_V6 18u

static const uint8_t v6_local[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};      /* 2001:db8:1::5 */
static const uint8_t v6_web[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34}; /* 2001:db8:10::1234 */
static const uint8_t v6_client[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};  /* 2001:db8:20::5 */
/* the same low 64 bits under another /48: read in the wrong order or from
 * the wrong place, the two would not be told apart */
static const uint8_t v6_stray[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x99, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
static const uint8_t v6_link[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0, 3}; /* fe80::211:22ff:fe33:3 */

static UINT8 *v6_blob(uint64_t serial, shape s, size_t *len)
{
    /* the v4 bulk identity and rule of harness_shaper.c too, so that its unload cycle defers packets of a v4
     * and a v6 flow under one policy: a second push would refill the class and let the worker drain part of
     * the queue between the two bursts */
    static const qb_ident ids[] = {
        {.id = 1, .kind = SQFW_KIND_IMAGE_PATH, .class_id = 2, .name = BULK_PATH},
        {.id = 61, .kind = SQFW_KIND_IMAGE_PATH, .class_id = 2, .name = V6_APP},
        {.id = 62, .kind = SQFW_KIND_IMAGE_PATH, .flags = SQFW_IDF_REQUIRE_HASH, .class_id = 2, .name = V6_SIGNED,
         .sha256 = {0xd4, 0xf0, 0xbc, 0x5a, 0x29, 0xde, 0x06, 0xb5, 0x10, 0xf9, 0xaa, 0x42, 0x8f, 0x1e, 0xed, 0xba,
                    0x92, 0x60, 0x12, 0xb5, 0x91, 0xfe, 0xf7, 0xa5, 0x18, 0xe7, 0x76, 0xa7, 0xc9, 0xbd, 0x18, 0x24}},
    };
    static const qb_rule rules[] = {
        {.id = 1, .identity = 1, .family = 4, .prefix = 0, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 443,
         .port_hi = 443, .class_id = SQFW_CLASS_INHERIT},
        /* out to 2001:db8:10::/48 port 443, TCP; UDP too for the signed one */
        {.id = 601, .identity = 61, .family = 6, .prefix = 48, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 443,
         .port_hi = 443, .addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0x10}, .class_id = SQFW_CLASS_INHERIT},
        {.id = 602, .identity = 62, .family = 6, .prefix = 48, .proto = 17, .dir = SQFW_DIR_OUT, .port_lo = 443,
         .port_hi = 443, .addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0x10}, .class_id = SQFW_CLASS_INHERIT},
        /* out to the link (fe80::/10) port 443: the shaped flow */
        {.id = 603, .identity = 61, .family = 6, .prefix = 10, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 443,
         .port_hi = 443, .addr = {0xfe, 0x80}, .class_id = SQFW_CLASS_INHERIT},
        /* in from 2001:db8:20::/48 to local port 8443 */
        {.id = 604, .identity = 61, .family = 6, .prefix = 48, .proto = 6, .dir = SQFW_DIR_IN, .port_lo = 8443,
         .port_hi = 8443, .addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0x20}, .class_id = SQFW_CLASS_INHERIT},
        {.id = 605, .identity = 62, .family = 6, .prefix = 48, .proto = 6, .dir = SQFW_DIR_IN, .port_lo = 8443,
         .port_hi = 8443, .addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0x20}, .class_id = SQFW_CLASS_INHERIT},
    };
    qb_class classes[] = {{.id = 0, .weight = 1}, shaped_class(2, s)};
    static const qb_level levels[] = {{.admit = 0x3}};
    qb_policy p = {.serial = serial, .default_action = SQFW_ACTION_ENFORCE, .loopback = SQFW_LOOPBACK_ALLOW,
                   .dns = SQFW_DNS_BY_RULES, .unknown_image = SQFW_UNKNOWN_BLOCK, .max_pended = 8,
                   .pend_timeout_ms = 2000, .ids = ids, .n_ids = 3, .rules = rules, .n_rules = 6,
                   .classes = classes, .n_classes = 2, .levels = levels, .n_levels = 1};
    return qb_build_alloc(&p, len);
}

static int v6_install(HANDLE h, uint64_t serial, shape s)
{
    size_t len = 0;
    UINT8 *blob = v6_blob(serial, s, &len);
    sqfw_set_policy_out res;
    int ok = blob && push(h, blob, (DWORD)len, &res) == 0 && res.status == SQFW_OK && replica_install(blob, len);
    free(blob);
    return ok;
}

static void v6_path(sq_classify_in *ci, const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < n && i < 260; i++)
        ci->path[i] = (uint16_t)(unsigned char)path[i];
    ci->path_bytes = (uint32_t)(2 * (n < 260 ? n : 260));
}

static sq_classify_in v6_req(uint32_t callout, uint32_t layer, const char *path, uint32_t pid, uint8_t proto,
                             const uint8_t remote[16], uint16_t rport, uint16_t lport)
{
    sq_classify_in ci;
    memset(&ci, 0, sizeof ci);
    ci.callout = callout, ci.layer_id = layer, ci.protocol = proto, ci.pid = pid;
    ci.local_port = lport, ci.remote_port = rport, ci.if_index = 7, ci.sub_if_index = 3;
    ci.ip_header_size = V6_IP_HEADER, ci.transport_header_size = proto == 17 ? 8 : V6_TCP_HEADER;
    ci.scope_id = remote[0] == 0xfe ? V6_SCOPE : 0;
    memcpy(ci.local_addr6, v6_local, 16);
    memcpy(ci.remote_addr6, remote, 16);
    v6_path(&ci, path);
    return ci;
}

static sq_classify_out v6_classify(HANDLE h, const sq_classify_in *ci)
{
    sq_classify_out co;
    memset(&co, 0xEE, sizeof co);
    if (ioctl(h, IOCTL_STANDIN_CLASSIFY, ci, sizeof *ci, &co, sizeof co, NULL) != 0)
        memset(&co, 0xEE, sizeof co);
    return co;
}

/* The same request as the core sees it: what request.c should build from the _V6 values. */
static sqfw_request v6_core_req(const sq_classify_in *ci, uint8_t dir)
{
    static char path[261];
    uint32_t n = ci->path_bytes / 2;
    for (uint32_t i = 0; i < n && i < 260; i++)
        path[i] = (char)ci->path[i];
    path[n < 260 ? n : 260] = 0;
    sqfw_request r;
    memset(&r, 0, sizeof r);
    r.process_key = SQFW_PROCESS_KEY(ci->pid, 0);
    r.path = (const uint8_t *)path;
    r.path_len = (uint32_t)strlen(path);
    r.pid = ci->pid;
    r.direction = dir;
    r.protocol = ci->protocol;
    r.family = 6;
    r.remote_port = ci->remote_port;
    r.local_port = ci->local_port;
    memcpy(r.remote_addr, ci->remote_addr6, 16);
    memcpy(r.local_addr, ci->local_addr6, 16);
    return r;
}

static uint32_t v6_core_verdict(const sq_classify_in *ci, uint8_t dir)
{
    sqfw_request r = v6_core_req(ci, dir);
    sqfw_decision d;
    sqfw_explain(replica, &r, replica_now, &d);
    return d.verdict;
}

static int same_action(const sq_classify_out *o, uint32_t core_verdict)
{
    if (core_verdict == SQFW_ALLOW)
        return o->action == ACTION_PERMIT;
    if (core_verdict == SQFW_PEND)
        return o->action == ACTION_BLOCK && (o->flags & FLAG_ABSORB) && !(o->rights & RIGHT_WRITE);
    return o->action == ACTION_BLOCK && !(o->flags & FLAG_ABSORB) && !(o->rights & RIGHT_WRITE);
}

/* (a) ALE connect and recv-accept at the _V6 layers: the driver's verdict is the core's. */
static void v6_authorize_checks(HANDLE h)
{
    sq_classify_in ci = v6_req(SQ_C_CONNECT_V6, SQ_LAYER_CONNECT_V6, V6_APP, 5200, 6, v6_web, 443, V6_LPORT);
    drain_events(h, NULL);
    memset(&last_allowed, 0, sizeof last_allowed);
    sq_classify_out o = v6_classify(h, &ci);
    uint32_t v = v6_core_verdict(&ci, SQFW_DIR_OUTBOUND);
    CHECK("v6 connect of the whitelisted app to 2001:db8:10::1234 port 443: permitted, as the core decides",
          v == SQFW_ALLOW && same_action(&o, v));
    drain_events(h, NULL);
    CHECK("its ALLOWED event carries the v6 tuple in network order (family 6, 2001:db8:1::5 -> 2001:db8:10::1234)",
          last_allowed.family == 6 && memcmp(last_allowed.remote_addr, v6_web, 16) == 0 &&
              memcmp(last_allowed.local_addr, v6_local, 16) == 0 && last_allowed.remote_port == 443 &&
              last_allowed.local_port == V6_LPORT && last_allowed.rule_id == 601);

    ci = v6_req(SQ_C_CONNECT_V6, SQ_LAYER_CONNECT_V6, V6_APP, 5200, 6, v6_stray, 443, V6_LPORT + 1);
    o = v6_classify(h, &ci);
    v = v6_core_verdict(&ci, SQFW_DIR_OUTBOUND);
    CHECK("v6 connect of the same app to 2001:db8:99::1234 (outside its /48): blocked, as the core decides",
          v == SQFW_BLOCK && same_action(&o, v));

    ci = v6_req(SQ_C_CONNECT_V6, SQ_LAYER_CONNECT_V6, V6_STRANGER, 5201, 6, v6_web, 443, V6_LPORT + 2);
    o = v6_classify(h, &ci);
    v = v6_core_verdict(&ci, SQFW_DIR_OUTBOUND);
    CHECK("v6 connect of an unknown app in enforce mode: blocked, write right cleared, as the core decides",
          v == SQFW_BLOCK && same_action(&o, v));

    ci = v6_req(SQ_C_ACCEPT_V6, SQ_LAYER_ACCEPT_V6, V6_APP, 5200, 6, v6_client, 50000, 8443);
    o = v6_classify(h, &ci);
    v = v6_core_verdict(&ci, SQFW_DIR_INBOUND);
    CHECK("v6 recv-accept from 2001:db8:20::5 to port 8443: permitted, as the core decides",
          v == SQFW_ALLOW && same_action(&o, v));
    ci = v6_req(SQ_C_ACCEPT_V6, SQ_LAYER_ACCEPT_V6, V6_APP, 5200, 6, v6_stray, 50000, 8443);
    o = v6_classify(h, &ci);
    v = v6_core_verdict(&ci, SQFW_DIR_INBOUND);
    CHECK("v6 recv-accept from 2001:db8:99::1234: blocked, as the core decides", v == SQFW_BLOCK && same_action(&o, v));
    ci = v6_req(SQ_C_ACCEPT_V6, SQ_LAYER_ACCEPT_V6, V6_STRANGER, 5201, 6, v6_client, 50000, 8443);
    o = v6_classify(h, &ci);
    v = v6_core_verdict(&ci, SQFW_DIR_INBOUND);
    CHECK("v6 recv-accept by an unknown app: blocked, as the core decides", v == SQFW_BLOCK && same_action(&o, v));
}

/* The pend path at the _V6 layers: the kept packet goes back out (or in)
 * with the v6 address, the scope id and the 40-byte header. */
static void v6_pend_checks(HANDLE h)
{
    take_injections(h);
    n_seen = 0;
    sq_counts c0 = counts(h);
    /* a UDP connect to the link-local peer's subnet is not in the rules; to 2001:db8:10:: it is */
    sq_classify_in ci = v6_req(SQ_C_CONNECT_V6, SQ_LAYER_CONNECT_V6, V6_SIGNED, 5300, 17, v6_web, 443, V6_LPORT + 3);
    ci.with_packet = 1;
    ci.scope_id = 5; /* a global address has scope 0 on Windows; any value must travel as given */
    uint32_t v = v6_core_verdict(&ci, SQFW_DIR_OUTBOUND);
    sq_classify_out o = v6_classify(h, &ci);
    CHECK("v6 UDP connect of the hash-checked app: pended (absorbed) like the core, its datagram cloned",
          v == SQFW_PEND && same_action(&o, v) && o.reserved == 0 && counts(h).clones == c0.clones + 1);
    uint64_t key = drain_events(h, NULL);
    CHECK("its NEW_IDENTITY names the process", key == SQFW_PROCESS_KEY(5300, 0));
    sqfw_attest_in a;
    a.process_key = key;
    memcpy(a.sha256, agent_sha, 32);
    CHECK("attested", ioctl(h, IOCTL_SQFW_ATTEST, &a, sizeof a, NULL, 0, NULL) == 0);
    sqfw_attest(replica, key, agent_sha, replica_now);
    CHECK("the pend completed", WAIT_COUNT(h, completed, c0.completed + 1));
    ci.with_packet = 0, ci.reauth = 1;
    o = v6_classify(h, &ci);
    v = v6_core_verdict(&ci, SQFW_DIR_OUTBOUND);
    CHECK("re-authorisation permits, as the core decides", v == SQFW_ALLOW && o.action == ACTION_PERMIT);
    CHECK("the kept datagram send-injected", wait_injections(h, 1));
    const sq_injection *j = &seen[0];
    CHECK("with the v6 injection handle, AF_INET6, to 2001:db8:10::1234 (16 bytes, network order), scope id 5",
          n_seen >= 1 && !j->receive && j->handle_ok && j->family == 23 && memcmp(j->remote, v6_web, 16) == 0 &&
              j->scope_id == 5 && j->compartment == 1 && j->offset_back == 0);

    /* inbound: the SYN handed back with the completion, receive-injected at its IPv6 header */
    n_seen = 0;
    sq_counts c1 = counts(h);
    ci = v6_req(SQ_C_ACCEPT_V6, SQ_LAYER_ACCEPT_V6, V6_SIGNED, 5301, 6, v6_client, 50001, 8443);
    ci.with_packet = 1;
    o = v6_classify(h, &ci);
    CHECK("v6 recv-accept of the hash-checked app absorbed, original left in place",
          same_action(&o, SQFW_PEND) && o.reserved == 0);
    key = drain_events(h, NULL);
    a.process_key = key;
    CHECK("attested", key == SQFW_PROCESS_KEY(5301, 0) && ioctl(h, IOCTL_SQFW_ATTEST, &a, sizeof a, NULL, 0, NULL) == 0);
    sqfw_attest(replica, key, agent_sha, replica_now);
    CHECK("completed with its packet", WAIT_COUNT(h, completed_with_packet, c1.completed_with_packet + 1));
    CHECK("and receive-injected", wait_injections(h, 1));
    j = &seen[0];
    CHECK("AF_INET6 on the arrival interface 7/3, moved back over the IPv6 and TCP headers (40 + 20 bytes)",
          n_seen >= 1 && j->receive && j->handle_ok && j->family == 23 && j->if_index == 7 && j->sub_if_index == 3 &&
              j->offset_back == V6_IP_HEADER + V6_TCP_HEADER && j->data_len == 64 + V6_IP_HEADER + V6_TCP_HEADER);
    CHECK("the core allows that accept once attested", v6_core_verdict(&ci, SQFW_DIR_INBOUND) == SQFW_ALLOW);
    Sleep(50);
    sq_counts c2 = counts(h);
    CHECK("both kept clones freed", c2.clones_freed - c0.clones_freed == 2 && c2.clones - c0.clones == 2);
    n_seen = 0;
}

static sq_packets_in v6_packets(uint32_t callout, uint32_t layer, uint32_t count, uint32_t first_len, uint32_t mark)
{
    sq_packets_in pi = packets_req(callout, layer, count, first_len, mark);
    pi.flow_handle = V6_FLOW, pi.family = 6, pi.local_port = V6_LPORT, pi.remote_port = 443;
    pi.local_addr = pi.remote_addr = 0;
    memcpy(pi.local_addr6, v6_local, 16);
    memcpy(pi.remote_addr6, v6_link, 16);
    pi.ip_header_size = V6_IP_HEADER, pi.transport_header_size = V6_TCP_HEADER, pi.scope_id = V6_SCOPE;
    return pi;
}

/* ALE_FLOW_ESTABLISHED_V6 for the shaped flow, in the driver and the replica. */
static int v6_flow(HANDLE h)
{
    sq_counts c0 = counts(h);
    sq_classify_in ci = v6_req(SQ_C_FLOW_V6, SQ_LAYER_FLOW_V6, V6_APP, 5400, 6, v6_link, 443, V6_LPORT);
    ci.flow_handle = V6_FLOW, ci.direction = 0 /* FWP_DIRECTION_OUTBOUND */;
    sq_classify_out co = v6_classify(h, &ci);
    sqfw_request r = v6_core_req(&ci, SQFW_DIR_OUTBOUND);
    return co.action == ACTION_PERMIT && counts(h).flow_associated == c0.flow_associated + 2 &&
           sqfw_flow_established(replica, V6_FLOW, &r, replica_now) == SQFW_OK;
}

/* (b) a v6 flow shaped at OUTBOUND/INBOUND_TRANSPORT_V6. */
static void v6_shaper_checks(HANDLE h)
{
    sqfw_stats base = stats(h);
    CHECK("v6 flow established at ALE_FLOW_ESTABLISHED_V6: a context at both v6 transport layers", v6_flow(h));
    uint32_t class_id = 0;
    sqfw_flow_lookup(replica, V6_FLOW, NULL, &class_id);
    CHECK("the core puts the v6 flow in class 2", class_id == 2);

    const uint32_t extra = 4, n = SLOW_BURST + QUEUE_BOUND + extra, first = 600;
    sq_counts c1 = counts(h);
    sq_packets_in pi = v6_packets(SQ_C_OUT_V6, LAYER_OUT_V6, n, first, 0);
    sq_packets_out po = send_packets(h, &pi);
    uint32_t queued = 0, tally[3] = {0, 0, 0};
    uint32_t mismatches = compare_burst(V6_FLOW, &po, n, first, &queued, tally);
    printf("  v6 outbound burst: %u classified, core %u permitted, %u deferred, %u dropped, %u mismatches\n",
           po.count, tally[0], tally[1], tally[2], mismatches);
    CHECK("v6 outbound burst: each decision the core's (8 permitted, 256 deferred, 4 dropped)",
          po.count == n && mismatches == 0 && tally[0] == SLOW_BURST && tally[1] == QUEUE_BOUND && tally[2] == extra);
    sq_counts c2 = counts(h);
    CHECK("v6 outbound: one clone kept per deferred packet, originals where they came",
          (c2.clones - c2.clones_freed) - (c1.clones - c1.clones_freed) == QUEUE_BOUND && po.moved == 0);
    CHECK("v6 outbound: the driver's passed/deferred/dropped equal the core's", same_packet_stats(h, &base));

    take_injections(h);
    n_seen = 0;
    static uint32_t lens[QUEUE_BOUND];
    for (uint32_t i = 0; i < QUEUE_BOUND; i++)
        lens[i] = first + SLOW_BURST + i;
    CHECK("fast v6 policy pushed (the queue drains)", v6_install(h, 612, FAST));
    replica_drain(V6_FLOW, &queued, lens, QUEUE_BOUND);
    CHECK("all 256 deferred v6 packets re-injected", wait_injections(h, QUEUE_BOUND) && seen_lost == 0);
    uint32_t in_order = 0, well_sent = 0;
    for (uint32_t i = 0; i < QUEUE_BOUND && i < n_seen; i++) {
        const sq_injection *j = &seen[i];
        in_order += j->data_len == lens[i];
        well_sent += !j->receive && j->handle_ok && j->family == 23 && j->compartment == 1 &&
                     j->endpoint == 0xE0E0 && j->offset_back == 0 && memcmp(j->remote, v6_link, 16) == 0 &&
                     j->scope_id == V6_SCOPE;
    }
    printf("  %u v6 re-injections in arrival order, %u sent AF_INET6 to fe80::211:22ff:fe33:3 scope %u\n", in_order,
           well_sent, V6_SCOPE);
    CHECK("v6 re-injected in the order they came", in_order == QUEUE_BOUND);
    CHECK("FwpsInjectTransportSendAsync0 with the v6 handle, AF_INET6, the 16-byte remote address in network order, "
          "the scope id from the metadata, the compartment and endpoint",
          well_sent == QUEUE_BOUND);
    Sleep(50);
    CHECK("every v6 clone completed and freed", counts(h).clones_freed - c2.clones_freed == QUEUE_BOUND);
    CHECK("after the v6 drain the driver's counts equal the core's", same_packet_stats(h, &base));

    /* inbound */
    CHECK("slow v6 policy again", v6_install(h, 613, slow_from(700)));
    n_seen = 0;
    const uint32_t n_in = SLOW_BURST + 4, first_in = 700;
    sq_packets_in ii = v6_packets(SQ_C_IN_V6, LAYER_IN_V6, n_in, first_in, 0);
    po = send_packets(h, &ii);
    memset(tally, 0, sizeof tally);
    CHECK("v6 inbound burst: each decision the core's (8 permitted, 4 deferred)",
          po.count == n_in && compare_burst(V6_FLOW, &po, n_in, first_in, &queued, tally) == 0 &&
              tally[0] == SLOW_BURST && tally[1] == 4 && po.moved == 0);
    CHECK("fast v6 policy: the inbound queue drains", v6_install(h, 614, FAST));
    uint32_t in_lens[4] = {first_in + 8, first_in + 9, first_in + 10, first_in + 11};
    replica_drain(V6_FLOW, &queued, in_lens, 4);
    CHECK("4 v6 receive-injections", wait_injections(h, 4) && n_seen == 4);
    uint32_t well_recv = 0;
    const uint32_t back = V6_IP_HEADER + V6_TCP_HEADER;
    for (uint32_t i = 0; i < n_seen && i < 4; i++) {
        const sq_injection *j = &seen[i];
        well_recv += j->receive && j->handle_ok && j->family == 23 && j->if_index == 7 && j->sub_if_index == 3 &&
                     j->compartment == 1 && j->offset_back == back && j->data_len == in_lens[i] + back;
    }
    CHECK("FwpsInjectTransportReceiveAsync0: AF_INET6, interface 7/3, moved back over the IPv6 header and TCP (60 "
          "bytes), in order",
          well_recv == 4);
    CHECK("v6 inbound: the driver's counts equal the core's", same_packet_stats(h, &base));
    n_seen = 0;
}

static void v6_checks(HANDLE h)
{
    sqfw_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_flows = 64, lim.max_syn_slots = 64, lim.max_attest = 8, lim.max_services = 4, lim.max_events = 64;
    lim.seed = 1;
    size_t size = sqfw_engine_size(&lim);
    CHECK("v6: core replica created", sqfw_engine_init(malloc(size), size, &lim, &replica) == SQFW_OK);
    CHECK("v6 policy pushed (path identity, path + SHA-256 identity, v6 rules; class 2 at 1 B/s, a bucket of 8 packets)",
          v6_install(h, 611, slow_from(600)));
    v6_authorize_checks(h);
    v6_pend_checks(h);
    v6_shaper_checks(h);
}

/* For the unload cycle of harness_shaper.c, under v6_blob's slow policy and
 * after its v4 packets: a v6 flow with packets deferred in both directions
 * (behind the v4 ones in class 2's queue); returns how many. */
static uint32_t v6_defer_for_unload(HANDLE h)
{
    if (!v6_flow(h))
        return 0;
    sq_packets_in pi = v6_packets(SQ_C_OUT_V6, LAYER_OUT_V6, SLOW_BURST + 12, 100, 0);
    sq_packets_out po = send_packets(h, &pi);
    sq_packets_in ii = v6_packets(SQ_C_IN_V6, LAYER_IN_V6, 6, 100, 0);
    sq_packets_out pio = send_packets(h, &ii);
    uint32_t left = 0;
    for (uint32_t i = 0; i < po.count; i++)
        left += po.result[i] == SQ_OUT_ABSORB;
    for (uint32_t i = 0; i < pio.count; i++)
        left += pio.result[i] == SQ_OUT_ABSORB;
    return left;
}
