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

static void open_ws(fx_engine *f)
{
    sqfw_limits l = fx_limits();
    CHECK_EQ(fx_open(f, &l), SQFW_OK);
    CHECK_EQ(fx_install(f, golden_defs[1].policy, 1), SQFW_OK);
}

static sqfw_decision explain(fx_engine *f, const sqfw_request *r)
{
    sqfw_decision d;
    CHECK_EQ(sqfw_explain(f->e, r, 10 * MS, &d), SQFW_OK);
    return d;
}

TEST(classify_curl_by_path_user_and_port)
{
    fx_engine f;
    open_ws(&f);
    sqfw_request r = fx_req(CURL, SQFW_DIR_OUTBOUND, 6, "93.184.216.34", 443);
    fx_user(&r, SID);
    sqfw_decision d = explain(&f, &r);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.reason, SQFW_R_RULE);
    CHECK_EQ(d.rule_id, 5);
    CHECK_EQ(d.identity_id, 2);
    CHECK_EQ(d.class_id, 2);

    r.remote_port = 80;
    CHECK_EQ(explain(&f, &r).rule_id, 4);
    r.remote_port = 8080;
    d = explain(&f, &r);
    CHECK_EQ(d.verdict, SQFW_BLOCK);
    CHECK_EQ(d.reason, SQFW_R_NO_RULE);

    r.remote_port = 443;
    r.protocol = 17; /* the rules name TCP */
    CHECK_EQ(explain(&f, &r).reason, SQFW_R_NO_RULE);

    r.protocol = 6;
    fx_user(&r, "S-1-5-21-1000-1000-1000-1002");
    CHECK_EQ(explain(&f, &r).reason, SQFW_R_USER_MISMATCH);

    /* NT paths compare case-insensitively */
    const char *upper = "\\Device\\HarddiskVolume2\\Windows\\System32\\CURL.EXE";
    r.path = (const uint8_t *)upper;
    fx_user(&r, SID);
    CHECK_EQ(explain(&f, &r).rule_id, 5);

    r = fx_req("\\device\\harddiskvolume2\\evil.exe", SQFW_DIR_OUTBOUND, 6, "93.184.216.34", 443);
    d = explain(&f, &r);
    CHECK_EQ(d.verdict, SQFW_BLOCK);
    CHECK_EQ(d.reason, SQFW_R_UNKNOWN_APP);
    CHECK_EQ(d.identity_id, 0);
    fx_close(&f);
}

TEST(classify_agent_needs_attested_hash)
{
    fx_engine f;
    open_ws(&f);
    sqfw_request r = fx_req(AGENT, SQFW_DIR_OUTBOUND, 6, "10.20.99.1", 443);
    sqfw_decision d = explain(&f, &r);
    CHECK_EQ(d.verdict, SQFW_PEND);
    CHECK_EQ(d.reason, SQFW_R_NEEDS_HASH);

    uint8_t wrong[32] = {1};
    CHECK_EQ(sqfw_attest(f.e, r.process_key, wrong, 1), SQFW_OK);
    d = explain(&f, &r);
    CHECK_EQ(d.verdict, SQFW_BLOCK);
    CHECK_EQ(d.reason, SQFW_R_HASH_MISMATCH);

    CHECK_EQ(sqfw_attest(f.e, r.process_key, sha_agent, 1), SQFW_OK);
    d = explain(&f, &r);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.rule_id, 1);

    r.remote_addr[1] = 21; /* 10.21.99.1 outside 10.20/16 */
    CHECK_EQ(explain(&f, &r).reason, SQFW_R_NO_RULE);

    /* another process of the same image has no attestation of its own */
    r.remote_addr[1] = 20;
    r.process_key = 2000;
    CHECK_EQ(explain(&f, &r).verdict, SQFW_PEND);

    /* v6 rule and the inbound rule */
    r.process_key = 1000;
    sqfw_request v6 = fx_req(AGENT, SQFW_DIR_OUTBOUND, 6, "2001:db8:ffff::1", 443);
    CHECK_EQ(explain(&f, &v6).rule_id, 2);
    v6 = fx_req(AGENT, SQFW_DIR_OUTBOUND, 6, "2001:db9::1", 443);
    CHECK_EQ(explain(&f, &v6).reason, SQFW_R_NO_RULE);
    sqfw_request in = fx_req(AGENT, SQFW_DIR_INBOUND, 6, "10.20.30.77", 8443);
    d = explain(&f, &in);
    CHECK_EQ(d.rule_id, 3);
    CHECK_EQ(d.class_id, 1);
    in.local_port = 443;
    CHECK_EQ(explain(&f, &in).reason, SQFW_R_NO_RULE);
    fx_close(&f);
}

TEST(classify_services_loopback_and_dns)
{
    fx_engine f;
    open_ws(&f);
    const char *svchost = "\\device\\harddiskvolume2\\windows\\system32\\svchost.exe";
    sqfw_request r = fx_req(svchost, SQFW_DIR_OUTBOUND, 6, "13.107.4.50", 443);
    CHECK_EQ(explain(&f, &r).reason, SQFW_R_UNKNOWN_APP); /* svchost itself is not whitelisted */
    fx_service(&r, "wuauserv");
    sqfw_decision d = explain(&f, &r);
    CHECK_EQ(d.rule_id, 7);
    CHECK_EQ(d.identity_id, 4);

    /* the glue may know only the process; the agent binds it to its service */
    r.service = NULL;
    r.service_len = 0;
    r.process_key = 777;
    CHECK_EQ(sqfw_service_bind(f.e, 777, (const uint8_t *)"WUAUSERV", 8), SQFW_OK);
    CHECK_EQ(explain(&f, &r).rule_id, 7);

    /* DNS client service: allowed to port 53 by setting, whatever the server */
    sqfw_request dns = fx_req(svchost, SQFW_DIR_OUTBOUND, 17, "8.8.8.8", 53);
    fx_service(&dns, "Dnscache");
    CHECK_EQ(explain(&f, &dns).reason, SQFW_R_DNS_CLIENT);
    dns.remote_port = 5353;
    CHECK_EQ(explain(&f, &dns).reason, SQFW_R_NO_RULE);

    sqfw_request lo = fx_req("\\device\\x\\anything.exe", SQFW_DIR_OUTBOUND, 6, "127.0.0.1", 9000);
    CHECK_EQ(explain(&f, &lo).reason, SQFW_R_LOOPBACK);
    lo = fx_req("\\device\\x\\anything.exe", SQFW_DIR_OUTBOUND, 6, "::1", 9000);
    CHECK_EQ(explain(&f, &lo).verdict, SQFW_ALLOW);
    lo = fx_req("\\device\\x\\anything.exe", SQFW_DIR_OUTBOUND, 6, "10.0.0.5", 9000);
    lo.flags = SQFW_RF_LOOPBACK; /* local address reached via loopback */
    CHECK_EQ(explain(&f, &lo).reason, SQFW_R_LOOPBACK);
    fx_close(&f);
}

TEST(classify_audit_policy_overlaps_and_hash_identity)
{
    fx_engine f;
    sqfw_limits l = fx_limits();
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    CHECK_EQ(fx_install(&f, golden_defs[2].policy, 1), SQFW_OK);
    const char *tool = "\\device\\mup\\share\\tool.exe";
    sqfw_request r = fx_req(tool, SQFW_DIR_OUTBOUND, 17, "192.168.1.200", 5550);
    sqfw_decision d = explain(&f, &r);
    CHECK_EQ(d.rule_id, 21); /* the /25 is more specific than the /24 */
    CHECK_EQ(d.class_id, 5);
    r.remote_port = 5700;
    CHECK_EQ(explain(&f, &r).rule_id, 20);
    r.remote_addr[3] = 10; /* 192.168.1.10: only the /24 */
    r.remote_port = 5550;
    CHECK_EQ(explain(&f, &r).rule_id, 20);
    r.remote_port = 7000; /* nothing; audit mode allows and flags it */
    d = explain(&f, &r);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.reason, SQFW_R_NO_RULE);
    CHECK(d.flags & SQFW_DF_AUDIT);

    /* loopback is enforced in this policy */
    sqfw_request lo = fx_req(tool, SQFW_DIR_OUTBOUND, 17, "127.0.0.1", 5550);
    CHECK_EQ(explain(&f, &lo).reason, SQFW_R_NO_RULE);

    /* hash-only identity: any path, once the agent attested its hash */
    static const uint8_t sha_tool[32] = {0x7c, 0x9b, 0xbe, 0x5e, 0xc9, 0xb3, 0xfb, 0x77, 0x4e, 0x8f, 0xa0,
                                         0xf5, 0x42, 0x47, 0xe9, 0x3c, 0x34, 0xdd, 0xf8, 0xe5, 0xd1, 0x6f,
                                         0xe3, 0x07, 0x34, 0x20, 0xde, 0x0a, 0xe8, 0x1a, 0x26, 0x2d};
    sqfw_request h = fx_req("\\device\\harddiskvolume3\\tmp\\renamed.exe", SQFW_DIR_INBOUND, 132, "fd12::5", 0);
    h.process_key = 31337;
    CHECK_EQ(explain(&f, &h).reason, SQFW_R_NEEDS_HASH);
    CHECK_EQ(sqfw_attest(f.e, 31337, sha_tool, 1), SQFW_OK);
    d = explain(&f, &h);
    CHECK_EQ(d.reason, SQFW_R_RULE);
    CHECK_EQ(d.rule_id, 10);
    CHECK_EQ(d.identity_id, 7);
    h.remote_addr[0] = 0xfc;
    CHECK_EQ(explain(&f, &h).reason, SQFW_R_NO_RULE);
    fx_close(&f);
}

/* ---- randomized equivalence with a brute-force linear matcher ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static int prefix_match(const uint8_t *a, const uint8_t *b, int plen)
{
    for (int i = 0; i < plen; i++)
        if (((a[i / 8] >> (7 - i % 8)) & 1) != ((b[i / 8] >> (7 - i % 8)) & 1))
            return 0;
    return 1;
}

/* Reference semantics from docs/policy-format.md: longest prefix, then a
 * protocol-specific rule before an any-protocol one, then lowest rule id. */
static int reference(const qb_rule *rules, int n, uint32_t ident, uint8_t fam, uint8_t proto, uint8_t dir,
                     const uint8_t *addr, uint16_t port)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        const qb_rule *r = &rules[i];
        if (r->identity != ident || (r->family && r->family != fam) || !(r->dir & dir))
            continue;
        if (r->proto && r->proto != proto)
            continue;
        if (port < r->port_lo || port > r->port_hi || !prefix_match(addr, r->addr, r->prefix))
            continue;
        if (best < 0) {
            best = i;
            continue;
        }
        const qb_rule *b = &rules[best];
        if (r->prefix > b->prefix || (r->prefix == b->prefix && r->proto && !b->proto))
            best = i;
    }
    return best;
}

static void mask(uint8_t *a, int plen, int bytes)
{
    for (int i = 0; i < bytes * 8; i++)
        if (i >= plen)
            a[i / 8] &= (uint8_t)~(1u << (7 - i % 8));
}

TEST(classify_matches_linear_reference_on_random_policies)
{
    enum { NID = 8, NRULES = 1500, NQ = 30000 };
    static qb_ident ids[NID];
    static qb_rule rules[NRULES];
    static char names[NID][32];
    qb_class cls = {.id = 0, .weight = 1};
    qb_level lvl = {.admit = 1};
    for (int i = 0; i < NID; i++) {
        snprintf(names[i], sizeof names[i], "\\device\\app%d.exe", i);
        ids[i] = (qb_ident){.id = (uint32_t)(i + 1), .kind = SQFW_KIND_IMAGE_PATH, .name = names[i]};
    }
    /* few distinct prefixes so that rules overlap often */
    for (int i = 0; i < NRULES; i++) {
        qb_rule *r = &rules[i];
        r->id = (uint32_t)(i + 1);
        r->identity = 1 + rnd() % NID;
        int k = rnd() % 50;
        r->family = k == 0 ? 0 : k < 30 ? 4 : 6;
        r->proto = (uint8_t)((rnd() % 3 == 0) ? 0 : (rnd() % 2 ? 6 : 17));
        r->dir = (uint8_t)(1 + rnd() % 3);
        r->class_id = SQFW_CLASS_INHERIT;
        if (r->family == 4) {
            static const uint8_t lens[] = {8, 16, 20, 24, 28, 32, 32, 32};
            r->prefix = lens[rnd() % 8];
            r->addr[0] = 10;
            r->addr[1] = (uint8_t)(rnd() % 4);
            r->addr[2] = (uint8_t)(rnd() % 4);
            r->addr[3] = (uint8_t)(rnd() % 8);
            mask(r->addr, r->prefix, 4);
        } else if (r->family == 6) {
            static const uint8_t lens[] = {16, 32, 48, 64, 100, 128, 128, 128};
            r->prefix = lens[rnd() % 8];
            r->addr[0] = 0xfd;
            r->addr[5] = (uint8_t)(rnd() % 4);
            r->addr[15] = (uint8_t)(rnd() % 4);
            mask(r->addr, r->prefix, 16);
        }
        uint16_t lo = (uint16_t)(rnd() % 120), len = (uint16_t)(rnd() % 40);
        r->port_lo = lo;
        r->port_hi = (uint16_t)(lo + len);
        if (rnd() % 50 == 0) {
            r->port_lo = 0;
            r->port_hi = 65535;
        }
    }
    qb_policy p = {.serial = 9, .max_pended = 1, .pend_timeout_ms = 1, .loopback = SQFW_LOOPBACK_ENFORCE,
                   .ids = ids, .n_ids = NID, .rules = rules, .n_rules = NRULES, .classes = &cls, .n_classes = 1,
                   .levels = &lvl, .n_levels = 1};
    fx_engine f;
    sqfw_limits l = fx_limits();
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    CHECK_EQ(fx_install(&f, &p, 1), SQFW_OK);
    int mismatches = 0, matched = 0;
    for (int q = 0; q < NQ; q++) {
        uint32_t ident = 1 + rnd() % NID;
        sqfw_request r;
        memset(&r, 0, sizeof r);
        r.process_key = 5;
        r.path = (const uint8_t *)names[ident - 1];
        r.path_len = (uint32_t)strlen(names[ident - 1]);
        r.family = rnd() % 2 ? 4 : 6;
        r.protocol = rnd() % 2 ? 6 : 17;
        r.direction = rnd() % 2 ? SQFW_DIR_OUTBOUND : SQFW_DIR_INBOUND;
        if (r.family == 4) {
            r.remote_addr[0] = 10;
            r.remote_addr[1] = (uint8_t)(rnd() % 4);
            r.remote_addr[2] = (uint8_t)(rnd() % 4);
            r.remote_addr[3] = (uint8_t)(rnd() % 16);
        } else {
            r.remote_addr[0] = 0xfd;
            r.remote_addr[5] = (uint8_t)(rnd() % 4);
            r.remote_addr[15] = (uint8_t)(rnd() % 8);
        }
        uint16_t port = (uint16_t)(rnd() % 400);
        if (r.direction == SQFW_DIR_INBOUND)
            r.local_port = port;
        else
            r.remote_port = port;
        uint8_t dir = r.direction == SQFW_DIR_INBOUND ? SQFW_DIR_IN : SQFW_DIR_OUT;
        int want = reference(rules, NRULES, ident, r.family, r.protocol, dir, r.remote_addr, port);
        sqfw_decision d;
        sqfw_explain(f.e, &r, 1, &d);
        uint32_t got = d.reason == SQFW_R_RULE ? d.rule_id : 0;
        uint32_t exp = want >= 0 ? rules[want].id : 0;
        if (got != exp && mismatches++ < 5)
            fprintf(stderr, "  query %d: got rule %u want %u\n", q, got, exp);
        matched += want >= 0;
    }
    CHECK_EQ(mismatches, 0);
    printf("  random policies: %d of %d queries matched a rule\n", matched, NQ);
    CHECK(matched > NQ / 10);        /* the test exercised matches... */
    CHECK(matched < NQ - NQ / 10);   /* ...and misses */
    fx_close(&f);
}
