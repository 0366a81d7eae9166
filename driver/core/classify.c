#include "classify.h"
#include "le.h"

static const uint8_t dnscache[] = {'d', 'n', 's', 'c', 'a', 'c', 'h', 'e'};

static int is_loopback(const sqfw_request *r)
{
    if (r->flags & SQFW_RF_LOOPBACK)
        return 1;
    if (r->family == 4)
        return r->remote_addr[0] == 127;
    static const uint8_t v6_lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    if (sq_equal(r->remote_addr, v6_lo, 16))
        return 1;
    return sq_equal(r->remote_addr, v4_mapped, 12) && r->remote_addr[12] == 127;
}

static void mask_addr(const uint8_t *addr, uint32_t bytes, uint32_t plen, uint64_t *k1, uint64_t *k2)
{
    uint8_t m[16] = {0};
    for (uint32_t i = 0; i < bytes; i++) {
        uint32_t bit0 = i * 8;
        uint8_t keep = bit0 + 8 <= plen ? 0xFF : bit0 >= plen ? 0x00 : (uint8_t)(0xFF << (8 - (plen - bit0)));
        m[i] = addr[i] & keep;
    }
    *k1 = le64(m);
    *k2 = le64(m + 8);
}

/* One candidate key of a rule lookup: (identity, family, proto, dir, prefix
 * length, masked address) and where its hash chain starts. */
typedef struct sq_probe_key {
    uint64_t k0, k1, k2;
    uint32_t slot;
} sq_probe_key;

static int32_t probe(const sqfw_policy *p, const sq_probe_key *k, uint16_t port)
{
    for (uint32_t i = 0; i <= p->ent_max_probe; i++) {
        uint32_t s = p->ent_slots[(k->slot + i) & p->ent_mask];
        if (s == 0)
            return -1;
        const sq_pentry *e = &p->entries[s - 1];
        if (e->k0 != k->k0 || e->k1 != k->k1 || e->k2 != k->k2)
            continue;
        /* binary search: last interval whose start <= port */
        const sq_iv *iv = p->iv + e->iv_first;
        uint32_t lo = 0, hi = e->iv_count;
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (iv[mid].start <= port)
                lo = mid;
            else
                hi = mid;
        }
        return iv[lo].rule_idx == SQ_NO_RULE ? -1 : (int32_t)iv[lo].rule_idx;
    }
    return -1;
}

/* Keys are probed in batches: all hashes of a batch are computed and their
 * slots and entries prefetched before the first comparison, so the cache
 * misses of a large table overlap instead of adding up (the rule count
 * decides how often a probe misses the cache, not how many probes run). */
enum { SQ_PROBE_BATCH = 8 };

int32_t sq_lookup_rule(const sqfw_policy *p, uint32_t ident_idx, uint8_t family, uint8_t proto, uint8_t dir,
                       const uint8_t *addr, uint16_t port)
{
    const sq_ident *id = &p->ident[ident_idx];
    uint32_t bytes = family == 4 ? 4 : 16;
    int len = family == 4 ? 32 : 128;
    while (len >= 0) {
        sq_probe_key keys[SQ_PROBE_BATCH];
        uint32_t n = 0;
        /* longest prefix first; each length gives the protocol's key, then the any-protocol key */
        for (; len >= 0 && n + 2 <= SQ_PROBE_BATCH; len--) {
            int specific = proto != 0 && (family == 4 ? (int)((id->v4_lens >> len) & 1)
                                                      : (int)((id->v6_lens[len >> 6] >> (len & 63)) & 1));
            int any = family == 4 ? (int)((id->v4_any_lens >> len) & 1)
                                  : (int)((id->v6_any_lens[len >> 6] >> (len & 63)) & 1);
            if (!specific && !any)
                continue;
            uint64_t k1, k2;
            mask_addr(addr, bytes, (uint32_t)len, &k1, &k2);
            uint64_t base = (uint64_t)ident_idx | ((uint64_t)family << 32) | ((uint64_t)dir << 48) | ((uint64_t)len << 56);
            if (specific)
                keys[n++] = (sq_probe_key){base | ((uint64_t)proto << 40), k1, k2, 0};
            if (any)
                keys[n++] = (sq_probe_key){base, k1, k2, 0};
        }
        for (uint32_t i = 0; i < n; i++) {
            keys[i].slot = (uint32_t)(sq_entry_hash(keys[i].k0, keys[i].k1, keys[i].k2) & p->ent_mask);
            SQ_PREFETCH(&p->ent_slots[keys[i].slot]);
        }
        for (uint32_t i = 0; i < n; i++) {
            uint32_t s = p->ent_slots[keys[i].slot];
            if (s != 0)
                SQ_PREFETCH(&p->entries[s - 1]);
        }
        for (uint32_t i = 0; i < n; i++) {
            int32_t rule = probe(p, &keys[i], port);
            if (rule >= 0)
                return rule;
        }
    }
    return -1;
}

static int resolve_identity(const sqfw_policy *p, const sqfw_request *r, const sq_facts *f, sq_match *m)
{
    int idx = -1;
    if (f->service_len)
        idx = sq_find_identity(p, &p->svc_tab, SQFW_KIND_SERVICE, f->service, f->service_len);
    if (idx < 0)
        idx = sq_find_identity(p, &p->path_tab, SQFW_KIND_IMAGE_PATH, r->path, r->path_len);
    if (idx >= 0) {
        const sq_ident *id = &p->ident[idx];
        m->ident_idx = idx;
        m->class_idx = id->class_idx;
        if (id->flags & SQFW_IDF_REQUIRE_HASH) {
            if (!f->sha256) {
                m->reason = SQFW_R_NEEDS_HASH;
                return 0;
            }
            if (!sq_equal(f->sha256, id->sha256, 32)) {
                m->reason = SQFW_R_HASH_MISMATCH;
                return 0;
            }
        }
    } else if (f->sha256 && p->has_hash_identities) {
        idx = sq_find_identity(p, &p->sha_tab, SQFW_KIND_IMAGE_HASH, f->sha256, 32);
        if (idx < 0) {
            m->reason = SQFW_R_UNKNOWN_APP;
            return 0;
        }
        m->ident_idx = idx;
        m->class_idx = p->ident[idx].class_idx;
    } else {
        m->reason = (p->has_hash_identities && p->unknown_image == SQFW_UNKNOWN_PEND_FOR_HASH && !f->sha256)
                        ? SQFW_R_NEEDS_HASH
                        : SQFW_R_UNKNOWN_APP;
        return 0;
    }
    const sq_ident *id = &p->ident[idx];
    if ((id->flags & SQFW_IDF_MATCH_USER) &&
        !(r->user_len == id->user_len && r->user && sq_equal_fold(r->user, id->user, id->user_len))) {
        m->reason = SQFW_R_USER_MISMATCH;
        return 0;
    }
    return 1;
}

void sq_classify(const sqfw_policy *p, const sqfw_request *r, const sq_facts *f, sq_match *m)
{
    m->reason = SQFW_R_NO_RULE;
    m->ident_idx = -1;
    m->rule_idx = -1;
    m->class_idx = 0;

    /* Loopback first: local IPC is the most common thing whitelists break. */
    if (p->loopback == SQFW_LOOPBACK_ALLOW && is_loopback(r)) {
        m->reason = SQFW_R_LOOPBACK;
        return;
    }
    /* The DNS client service resolves for every application, so its
     * queries cannot carry the asking application's identity. */
    if (p->dns == SQFW_DNS_ALLOW_CLIENT_SERVICE && r->direction == SQFW_DIR_OUTBOUND &&
        (r->protocol == 17 || r->protocol == 6) && r->remote_port == 53 && f->service_len == sizeof dnscache &&
        sq_equal_fold(f->service, dnscache, sizeof dnscache)) {
        m->reason = SQFW_R_DNS_CLIENT;
        return;
    }
    if (!resolve_identity(p, r, f, m))
        return;
    if (r->family != 4 && r->family != 6) {
        m->reason = SQFW_R_NO_RULE;
        return;
    }
    uint16_t port = r->direction == SQFW_DIR_INBOUND ? r->local_port : r->remote_port;
    if (r->protocol != 6 && r->protocol != 17)
        port = 0;
    uint8_t dir = r->direction == SQFW_DIR_INBOUND ? SQFW_DIR_IN : SQFW_DIR_OUT;
    int32_t rule = sq_lookup_rule(p, (uint32_t)m->ident_idx, r->family, r->protocol, dir, r->remote_addr, port);
    if (rule < 0) {
        m->reason = SQFW_R_NO_RULE;
        return;
    }
    m->rule_idx = rule;
    m->class_idx = p->rules[rule].class_idx;
    m->reason = SQFW_R_RULE;
}
