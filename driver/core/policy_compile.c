#include "le.h"
#include "policy_lookup.h"
#include "policy_parse.h"
#include "sort.h"

/* Arena layout: every array the compiled policy needs, sized from the
 * validated counts, plus scratch used only while compiling. */
typedef struct layout {
    uint32_t n_ident, id_cap, n_rules, n_exp, ent_cap, iv_max, n_class, n_level, strings_len;
    size_t off_ident, off_path, off_svc, off_sha, off_rules, off_entries, off_ent_slots, off_iv, off_class,
        off_level, off_strings, off_refs, off_heap, off_bounds, total;
} layout;

static uint32_t pow2_at_least(uint64_t n, uint32_t min)
{
    uint64_t c = min;
    while (c < n)
        c <<= 1;
    return (uint32_t)c;
}

static uint32_t expansions(const uint8_t *rule)
{
    uint32_t e = rule[SQFW_RULE_DIR] == SQFW_DIR_BOTH ? 2 : 1;
    return rule[SQFW_RULE_FAMILY] == 0 ? e * 2 : e;
}

static void plan(const sqfw_blob_view *v, layout *L)
{
    const sqfw_section_view *r = &v->s[SQFW_SECT_RULES];
    sq_zero(L, sizeof *L);
    L->n_ident = v->s[SQFW_SECT_IDENTITIES].count;
    L->id_cap = pow2_at_least(2ull * L->n_ident, 8);
    L->n_rules = r->count;
    for (uint32_t i = 0; i < r->count; i++)
        L->n_exp += expansions(r->p + (size_t)i * SQFW_RULE_SIZE);
    L->ent_cap = pow2_at_least(2ull * L->n_exp, 8);
    L->iv_max = 3 * L->n_exp + 1;
    L->n_class = v->s[SQFW_SECT_CLASSES].count;
    L->n_level = v->s[SQFW_SECT_LEVELS].count;
    L->strings_len = v->s[SQFW_SECT_STRINGS].length;

    size_t o = sq_align8(sizeof(sqfw_policy));
#define TAKE(field, bytes)                                                                                             \
    do {                                                                                                               \
        L->field = o;                                                                                                  \
        o += sq_align8((size_t)(bytes));                                                                               \
    } while (0)
    TAKE(off_ident, (size_t)L->n_ident * sizeof(sq_ident));
    TAKE(off_path, (size_t)L->id_cap * 4);
    TAKE(off_svc, (size_t)L->id_cap * 4);
    TAKE(off_sha, (size_t)L->id_cap * 4);
    TAKE(off_rules, (size_t)L->n_rules * sizeof(sq_rule));
    TAKE(off_entries, (size_t)L->n_exp * sizeof(sq_pentry));
    TAKE(off_ent_slots, (size_t)L->ent_cap * 4);
    TAKE(off_iv, (size_t)L->iv_max * sizeof(sq_iv));
    TAKE(off_class, (size_t)L->n_class * sizeof(sq_class));
    TAKE(off_level, (size_t)L->n_level * sizeof(sq_level));
    TAKE(off_strings, L->strings_len);
    TAKE(off_refs, (size_t)L->n_exp * 4);
    TAKE(off_heap, (size_t)L->n_exp * 4);
    TAKE(off_bounds, (size_t)(2 * L->n_exp + 1) * 4);
#undef TAKE
    L->total = o;
}

int sqfw_policy_arena_size(const uint8_t *blob, size_t len, size_t *arena_size, uint32_t *err_offset)
{
    sqfw_blob_view v;
    int rc = sqfw_parse(blob, len, &v, err_offset);
    if (rc != SQFW_OK)
        return rc;
    layout L;
    plan(&v, &L);
    if (arena_size)
        *arena_size = L.total;
    return SQFW_OK;
}

/* Returns 0 on success, 1 when an identity with the same key exists. */
static int strtab_insert(sqfw_policy *p, sq_strtab *t, int kind, uint32_t idx)
{
    const sq_ident *id = &p->ident[idx];
    const uint8_t *key = kind == SQFW_KIND_IMAGE_HASH ? id->sha256 : id->name;
    uint64_t h = sq_string_hash(kind, key, id->name_len);
    for (uint32_t i = 0;; i++) {
        uint32_t *slot = &t->slots[(h + i) & t->mask];
        if (*slot == 0) {
            *slot = idx + 1;
            if (i > t->max_probe)
                t->max_probe = i;
            return 0;
        }
        if (sq_ident_matches(&p->ident[*slot - 1], kind, key, id->name_len))
            return 1;
    }
}

/* ---- rule expansion keys ---- */

typedef struct build_ctx {
    const sqfw_policy *p;
} build_ctx;

/* A ref is rule_idx * 4 + expansion bits: bit0 picks v6 for family-any
 * rules, bit1 picks inbound for both-direction rules. */
static void ref_key(const sqfw_policy *p, uint32_t ref, uint64_t *k0, uint64_t *k1, uint64_t *k2)
{
    const sq_rule *r = &p->rules[ref >> 2];
    uint8_t fam = r->family ? r->family : ((ref & 1) ? 6 : 4);
    uint8_t dir = r->dir == SQFW_DIR_BOTH ? ((ref & 2) ? SQFW_DIR_IN : SQFW_DIR_OUT) : r->dir;
    *k0 = (uint64_t)r->ident_idx | ((uint64_t)fam << 32) | ((uint64_t)r->proto << 40) | ((uint64_t)dir << 48) |
          ((uint64_t)r->prefix << 56);
    *k1 = *k2 = 0;
}

static void ref_addr(const sqfw_policy *p, const uint8_t *rules_blob, uint32_t ref, uint64_t *k1, uint64_t *k2)
{
    SQFW_UNUSED(p);
    const uint8_t *a = rules_blob + (size_t)(ref >> 2) * SQFW_RULE_SIZE + SQFW_RULE_ADDR;
    *k1 = le64(a);
    *k2 = le64(a + 8);
}

typedef struct sort_ctx {
    const sqfw_policy *p;
    const uint8_t *rules_blob;
} sort_ctx;

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b ? 1 : 0; }

static int cmp_group(const sort_ctx *c, uint32_t a, uint32_t b)
{
    uint64_t a0, a1, a2, b0, b1, b2;
    ref_key(c->p, a, &a0, &a1, &a2);
    ref_key(c->p, b, &b0, &b1, &b2);
    ref_addr(c->p, c->rules_blob, a, &a1, &a2);
    ref_addr(c->p, c->rules_blob, b, &b1, &b2);
    int d = cmp_u64(a0, b0);
    if (!d)
        d = cmp_u64(a1, b1);
    if (!d)
        d = cmp_u64(a2, b2);
    return d;
}

static int cmp_ref(const void *ctx, uint32_t a, uint32_t b)
{
    const sort_ctx *c = (const sort_ctx *)ctx;
    int d = cmp_group(c, a, b);
    if (d)
        return d;
    d = cmp_u64(c->p->rules[a >> 2].port_lo, c->p->rules[b >> 2].port_lo);
    return d ? d : cmp_u64(a, b);
}

static int cmp_plain(const void *ctx, uint32_t a, uint32_t b)
{
    SQFW_UNUSED(ctx);
    return cmp_u64(a, b);
}

/* Min-heap of refs ordered by rule index: the lowest rule id among the
 * rules covering a port decides it. */
static void heap_push(uint32_t *h, uint32_t *n, uint32_t ref)
{
    uint32_t i = (*n)++;
    h[i] = ref;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if ((h[parent] >> 2) <= (h[i] >> 2))
            break;
        uint32_t t = h[parent];
        h[parent] = h[i];
        h[i] = t;
        i = parent;
    }
}

static void heap_pop(uint32_t *h, uint32_t *n)
{
    h[0] = h[--(*n)];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && (h[l] >> 2) < (h[m] >> 2))
            m = l;
        if (r < *n && (h[r] >> 2) < (h[m] >> 2))
            m = r;
        if (m == i)
            return;
        uint32_t t = h[m];
        h[m] = h[i];
        h[i] = t;
        i = m;
    }
}

/* Flattens one group's port ranges into disjoint intervals (sweep line). */
static uint32_t build_intervals(sqfw_policy *p, const uint32_t *refs, uint32_t k, uint32_t *heap, uint32_t *bounds)
{
    uint32_t nb = 0;
    bounds[nb++] = 0;
    for (uint32_t i = 0; i < k; i++) {
        const sq_rule *r = &p->rules[refs[i] >> 2];
        bounds[nb++] = r->port_lo;
        if (r->port_hi < 0xFFFF)
            bounds[nb++] = (uint32_t)r->port_hi + 1;
    }
    sq_heapsort(bounds, nb, cmp_plain, NULL);

    uint32_t first = p->n_iv, hn = 0, next = 0, last_rule = 0xFFFFFFFEu;
    uint32_t prev_b = 0xFFFFFFFFu;
    for (uint32_t bi = 0; bi < nb; bi++) {
        uint32_t b = bounds[bi];
        if (b == prev_b)
            continue;
        prev_b = b;
        while (next < k && p->rules[refs[next] >> 2].port_lo <= b)
            heap_push(heap, &hn, refs[next++]);
        while (hn && p->rules[heap[0] >> 2].port_hi < b)
            heap_pop(heap, &hn);
        uint32_t rule = hn ? heap[0] >> 2 : SQ_NO_RULE;
        if (rule == last_rule)
            continue;
        p->iv[p->n_iv].start = b;
        p->iv[p->n_iv].rule_idx = rule;
        p->n_iv++;
        last_rule = rule;
    }
    return p->n_iv - first;
}

static void set_len_bit(sq_ident *id, uint8_t fam, uint8_t prefix, uint8_t proto)
{
    uint64_t *v4 = proto ? &id->v4_lens : &id->v4_any_lens;
    uint64_t *v6 = proto ? id->v6_lens : id->v6_any_lens;
    if (fam == 4)
        *v4 |= 1ull << prefix;
    else
        v6[prefix >> 6] |= 1ull << (prefix & 63);
}

static void entry_insert(sqfw_policy *p, uint32_t idx)
{
    const sq_pentry *e = &p->entries[idx];
    uint64_t h = sq_entry_hash(e->k0, e->k1, e->k2);
    for (uint32_t i = 0;; i++) {
        uint32_t *slot = &p->ent_slots[(h + i) & p->ent_mask];
        if (*slot == 0) {
            *slot = idx + 1;
            if (i > p->ent_max_probe)
                p->ent_max_probe = i;
            return;
        }
    }
}

static void build_rules(sqfw_policy *p, const sqfw_blob_view *v, const layout *L, uint8_t *arena)
{
    const uint8_t *rb = v->s[SQFW_SECT_RULES].p;
    uint32_t *refs = (uint32_t *)(arena + L->off_refs);
    uint32_t *heap = (uint32_t *)(arena + L->off_heap);
    uint32_t *bounds = (uint32_t *)(arena + L->off_bounds);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_rules; i++) {
        const sq_rule *r = &p->rules[i];
        for (uint32_t e = 0; e < 4; e++) {
            if ((e & 1) && r->family != 0)
                continue;
            if ((e & 2) && r->dir != SQFW_DIR_BOTH)
                continue;
            refs[n++] = i * 4 + e;
        }
    }
    sort_ctx sc = {p, rb};
    sq_heapsort(refs, n, cmp_ref, &sc);

    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && cmp_group(&sc, refs[i], refs[j]) == 0)
            j++;
        sq_pentry *e = &p->entries[p->n_entries];
        ref_key(p, refs[i], &e->k0, &e->k1, &e->k2);
        ref_addr(p, rb, refs[i], &e->k1, &e->k2);
        e->iv_first = p->n_iv;
        e->iv_count = build_intervals(p, refs + i, j - i, heap, bounds);
        entry_insert(p, p->n_entries);
        p->n_entries++;
        set_len_bit(&p->ident[(uint32_t)e->k0], (uint8_t)(e->k0 >> 32), (uint8_t)(e->k0 >> 56), (uint8_t)(e->k0 >> 40));
        i = j;
    }
}

static int build_identities(sqfw_policy *p, const sqfw_blob_view *v, uint64_t now, uint32_t *err)
{
    const sqfw_section_view *s = &v->s[SQFW_SECT_IDENTITIES];
    for (uint32_t i = 0; i < p->n_ident; i++) {
        const uint8_t *r = s->p + (size_t)i * SQFW_ID_SIZE;
        sq_ident *id = &p->ident[i];
        id->id = le32(r + SQFW_ID_ID);
        id->kind = r[SQFW_ID_KIND];
        id->flags = r[SQFW_ID_FLAGS];
        id->class_idx = (uint16_t)sq_class_index(p, le16(r + SQFW_ID_CLASS));
        id->name_len = le32(r + SQFW_ID_NAME_LEN);
        id->name = id->name_len ? p->strings + le32(r + SQFW_ID_NAME_OFF) : NULL;
        id->user_len = le32(r + SQFW_ID_USER_LEN);
        id->user = id->user_len ? p->strings + le32(r + SQFW_ID_USER_OFF) : NULL;
        sq_copy(id->sha256, r + SQFW_ID_SHA256, 32);
        sq_rate_init(&id->conn_rate, le32(r + SQFW_ID_CONN_RATE), le32(r + SQFW_ID_CONN_BURST));
        sq_tokens_full(&id->conn, &id->conn_rate, now);
        sq_strtab *t = id->kind == SQFW_KIND_IMAGE_PATH   ? &p->path_tab
                       : id->kind == SQFW_KIND_SERVICE ? &p->svc_tab
                                                          : &p->sha_tab;
        if (id->kind == SQFW_KIND_IMAGE_HASH)
            p->has_hash_identities = 1;
        if (strtab_insert(p, t, id->kind, i)) {
            *err = s->offset + i * SQFW_ID_SIZE + (id->kind == SQFW_KIND_IMAGE_HASH ? SQFW_ID_SHA256 : SQFW_ID_NAME_OFF);
            return SQFW_E_DUPLICATE;
        }
    }
    return SQFW_OK;
}

static void build_classes(sqfw_policy *p, const sqfw_blob_view *v)
{
    const sqfw_section_view *s = &v->s[SQFW_SECT_CLASSES];
    for (uint32_t i = 0; i < p->n_class; i++) {
        const uint8_t *r = s->p + (size_t)i * SQFW_CLASS_SIZE;
        sq_class *c = &p->cls[i];
        c->id = le16(r + SQFW_CLASS_ID);
        c->weight = le32(r + SQFW_CLASS_WEIGHT);
        c->cfg_pkt_rate = le32(r + SQFW_CLASS_PKT_RATE);
        c->cfg_pkt_burst = le32(r + SQFW_CLASS_PKT_BURST);
        c->cfg_byte_rate = le32(r + SQFW_CLASS_BYTE_RATE);
        c->cfg_byte_burst = le32(r + SQFW_CLASS_BYTE_BURST);
        c->cfg_conn_rate = le32(r + SQFW_CLASS_CONN_RATE);
        c->cfg_conn_burst = le32(r + SQFW_CLASS_CONN_BURST);
        sq_rate_init(&c->pkt_rate, c->cfg_pkt_rate, c->cfg_pkt_burst);
        sq_rate_init(&c->byte_rate, c->cfg_byte_rate, c->cfg_byte_burst);
        sq_rate_init(&c->conn_rate, c->cfg_conn_rate, c->cfg_conn_burst);
    }
    const sqfw_section_view *l = &v->s[SQFW_SECT_LEVELS];
    for (uint32_t i = 0; i < p->n_level; i++) {
        const uint8_t *r = l->p + (size_t)i * SQFW_LEVEL_SIZE;
        p->lvl[i].pkt_cap = le32(r + SQFW_LEVEL_PKT_CAP);
        p->lvl[i].conn_cap = le32(r + SQFW_LEVEL_CONN_CAP);
        p->lvl[i].admit = le64(r + SQFW_LEVEL_ADMIT);
    }
}

int sqfw_policy_compile(const uint8_t *blob, size_t len, void *arena_mem, size_t arena_size, sqfw_policy **out,
                        uint32_t *err_offset)
{
    uint32_t dummy;
    uint32_t *err = err_offset ? err_offset : &dummy;
    *err = 0;
    if (!out || !arena_mem)
        return SQFW_E_ARG;
    *out = NULL;
    sqfw_blob_view v;
    int rc = sqfw_parse(blob, len, &v, err);
    if (rc != SQFW_OK)
        return rc;
    layout L;
    plan(&v, &L);
    if (arena_size < L.total || ((uintptr_t)arena_mem & 7u))
        return SQFW_E_NOMEM;

    uint8_t *a = (uint8_t *)arena_mem;
    sq_zero(a, L.total);
    sqfw_policy *p = (sqfw_policy *)a;
    p->serial = v.serial;
    const uint8_t *st = v.s[SQFW_SECT_SETTINGS].p;
    p->default_action = st[SQFW_SET_DEFAULT_ACTION];
    p->pend_timeout_action = st[SQFW_SET_PEND_TIMEOUT_ACTION];
    p->loopback = st[SQFW_SET_LOOPBACK];
    p->dns = st[SQFW_SET_DNS];
    p->unknown_image = st[SQFW_SET_UNKNOWN_IMAGE];
    p->max_pended = le32(st + SQFW_SET_MAX_PENDED);
    p->pend_timeout_ms = le32(st + SQFW_SET_PEND_TIMEOUT_MS);
    p->initial_level = le16(st + SQFW_SET_INITIAL_LEVEL);

    p->n_ident = L.n_ident;
    p->ident = (sq_ident *)(a + L.off_ident);
    sq_strtab *tabs[3] = {&p->path_tab, &p->svc_tab, &p->sha_tab};
    size_t toff[3] = {L.off_path, L.off_svc, L.off_sha};
    for (int i = 0; i < 3; i++) {
        tabs[i]->slots = (uint32_t *)(a + toff[i]);
        tabs[i]->mask = L.id_cap - 1;
    }
    p->n_rules = L.n_rules;
    p->rules = (sq_rule *)(a + L.off_rules);
    p->entries = (sq_pentry *)(a + L.off_entries);
    p->ent_slots = (uint32_t *)(a + L.off_ent_slots);
    p->ent_mask = L.ent_cap - 1;
    p->iv = (sq_iv *)(a + L.off_iv);
    p->n_class = L.n_class;
    p->cls = (sq_class *)(a + L.off_class);
    p->n_level = L.n_level;
    p->lvl = (sq_level *)(a + L.off_level);
    p->strings = a + L.off_strings;
    p->strings_len = L.strings_len;
    if (L.strings_len)
        sq_copy(p->strings, v.s[SQFW_SECT_STRINGS].p, L.strings_len);

    build_classes(p, &v);
    if ((rc = build_identities(p, &v, 0, err)) != SQFW_OK)
        return rc;

    const uint8_t *rb = v.s[SQFW_SECT_RULES].p;
    for (uint32_t i = 0; i < p->n_rules; i++) {
        const uint8_t *r = rb + (size_t)i * SQFW_RULE_SIZE;
        sq_rule *q = &p->rules[i];
        q->id = le32(r + SQFW_RULE_ID);
        /* identities are sorted by id; validated to exist */
        uint32_t want = le32(r + SQFW_RULE_IDENTITY), lo = 0, hi = p->n_ident;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (p->ident[mid].id < want)
                lo = mid + 1;
            else
                hi = mid;
        }
        q->ident_idx = lo;
        uint32_t cls = le16(r + SQFW_RULE_CLASS);
        q->class_idx = cls == SQFW_CLASS_INHERIT ? p->ident[lo].class_idx : (uint16_t)sq_class_index(p, cls);
        q->port_lo = le16(r + SQFW_RULE_PORT_LO);
        q->port_hi = le16(r + SQFW_RULE_PORT_HI);
        q->family = r[SQFW_RULE_FAMILY];
        q->prefix = r[SQFW_RULE_PREFIX];
        q->proto = r[SQFW_RULE_PROTO];
        q->dir = r[SQFW_RULE_DIR];
    }
    build_rules(p, &v, &L, a);

    const uint8_t *syn = v.s[SQFW_SECT_SYN].p;
    if (syn) {
        p->has_syn = 1;
        sq_rate_init(&p->syn_source, le32(syn + SQFW_SYN_PER_SOURCE_RATE), le32(syn + SQFW_SYN_PER_SOURCE_BURST));
        sq_rate_init(&p->syn_unproven, le32(syn + SQFW_SYN_UNPROVEN_RATE), le32(syn + SQFW_SYN_UNPROVEN_BURST));
        p->syn_slots = le32(syn + SQFW_SYN_TABLE_SLOTS);
        p->syn_v4_prefix = syn[SQFW_SYN_V4_PREFIX];
        p->syn_v6_prefix = syn[SQFW_SYN_V6_PREFIX];
    }
    *out = p;
    return SQFW_OK;
}
