#include "../core/le.h"
#include "../core/policy_format.h"
#include "fixture.h"
#include "golden_defs.h"
#include "test.h"

static const qb_policy *ws(void) { return golden_defs[1].policy; }

static uint8_t *build(const qb_policy *p, size_t *len) { return qb_build_alloc(p, len); }

/* Offset of the section-table entry of `type` in a canonical blob. */
static uint32_t entry_of(const uint8_t *b, uint16_t type)
{
    uint32_t n = le16(b + SQFW_HDR_NSECT);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e = SQFW_HDR_SIZE + i * SQFW_SECT_ENTRY_SIZE;
        if (le16(b + e) == type)
            return e;
    }
    return 0;
}

static void expect(const uint8_t *b, size_t len, int code, uint32_t offset)
{
    uint32_t off = 0xFFFFFFFF;
    int rc = sqfw_policy_check(b, len, &off);
    CHECK_EQ(rc, code);
    if (rc == code)
        CHECK_EQ(off, offset);
}

TEST(parse_accepts_every_golden_policy)
{
    for (unsigned i = 0; i < golden_count; i++) {
        size_t len;
        uint8_t *b = build(golden_defs[i].policy, &len);
        uint32_t off = 77;
        CHECK_EQ(sqfw_policy_check(b, len, &off), SQFW_OK);
        CHECK_EQ(off, 0);
        free(b);
    }
}

TEST(parse_rejects_header_damage)
{
    size_t len;
    uint8_t *b = build(ws(), &len);
    expect(b, 31, SQFW_E_TOO_SHORT, 0);
    expect(NULL, 0, SQFW_E_TOO_SHORT, 0);

    uint8_t *c = malloc(len + 8);
    memcpy(c, b, len);
    c[0] ^= 1;
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_MAGIC, 0);

    memcpy(c, b, len);
    put16(c + SQFW_HDR_VERSION, 2);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_VERSION, SQFW_HDR_VERSION);

    memcpy(c, b, len);
    memset(c + len, 0, 8);
    qb_fix_crc(c, len + 8); /* length field still says len */
    expect(c, len + 8, SQFW_E_LENGTH, SQFW_HDR_TOTAL);

    memcpy(c, b, len);
    put16(c + SQFW_HDR_FLAGS, 1);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_RESERVED, SQFW_HDR_FLAGS);

    memcpy(c, b, len);
    c[len - 20] ^= 0x40; /* payload change without a new checksum */
    expect(c, len, SQFW_E_CHECKSUM, SQFW_HDR_CRC);
    free(c);
    free(b);
}

TEST(parse_rejects_any_single_bit_flip)
{
    size_t len;
    uint8_t *b = build(ws(), &len);
    int accepted = 0;
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            b[i] ^= (uint8_t)(1 << bit);
            if (sqfw_policy_check(b, len, NULL) == SQFW_OK)
                accepted++;
            b[i] ^= (uint8_t)(1 << bit);
        }
    }
    CHECK_EQ(accepted, 0);
    CHECK_EQ(sqfw_policy_check(b, len, NULL), SQFW_OK);
    free(b);
}

TEST(parse_rejects_section_table_damage)
{
    size_t len;
    uint8_t *b = build(ws(), &len);
    uint8_t *c = malloc(len);
    uint32_t rules = entry_of(b, SQFW_SECT_RULES), classes = entry_of(b, SQFW_SECT_CLASSES);
    CHECK(rules && classes);

    memcpy(c, b, len);
    put32(c + rules + SQFW_SECT_OFFSET, (uint32_t)len + 8);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_SECTION_BOUNDS, rules + SQFW_SECT_OFFSET);

    memcpy(c, b, len);
    put32(c + rules + SQFW_SECT_OFFSET, le32(b + rules + SQFW_SECT_OFFSET) + 4);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_SECTION_ALIGN, rules + SQFW_SECT_OFFSET);

    memcpy(c, b, len);
    put32(c + rules + SQFW_SECT_LENGTH, le32(b + rules + SQFW_SECT_LENGTH) + SQFW_RULE_SIZE);
    put32(c + rules + SQFW_SECT_COUNT, le32(b + rules + SQFW_SECT_COUNT) + 1);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_SECTION_OVERLAP, le32(b + classes + SQFW_SECT_OFFSET));

    memcpy(c, b, len);
    put32(c + rules + SQFW_SECT_LENGTH, le32(b + rules + SQFW_SECT_LENGTH) - 1);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_SECTION_SIZE, rules + SQFW_SECT_LENGTH);

    memcpy(c, b, len);
    put16(c + rules + SQFW_SECT_TYPE, SQFW_SECT_CLASSES);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_SECTION_DUPLICATE, classes + SQFW_SECT_TYPE);

    memcpy(c, b, len);
    put16(c + rules + SQFW_SECT_TYPE, 9);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_SECTION_UNKNOWN, rules + SQFW_SECT_TYPE);

    memcpy(c, b, len);
    put16(c + SQFW_HDR_NSECT, 40);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_SECTION_TABLE, SQFW_HDR_NSECT);

    /* the padding after the strings section must be zero */
    uint32_t strings = entry_of(b, SQFW_SECT_STRINGS);
    uint32_t s_end = le32(b + strings + SQFW_SECT_OFFSET) + le32(b + strings + SQFW_SECT_LENGTH);
    CHECK(s_end % 8 != 0);
    memcpy(c, b, len);
    c[s_end] = 0xAA;
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_GAP, s_end);
    free(c);
    free(b);
}

/* Builds a copy of the workstation policy with one record field broken. */
typedef struct ws_copy {
    qb_policy p;
    qb_ident ids[4];
    qb_rule rules[7];
    qb_class classes[3];
    qb_level levels[3];
    qb_syn syn;
} ws_copy;

static void ws_clone(ws_copy *w)
{
    w->p = *ws();
    memcpy(w->ids, ws()->ids, sizeof w->ids);
    memcpy(w->rules, ws()->rules, sizeof w->rules);
    memcpy(w->classes, ws()->classes, sizeof w->classes);
    memcpy(w->levels, ws()->levels, sizeof w->levels);
    w->syn = *ws()->syn;
    w->p.ids = w->ids;
    w->p.rules = w->rules;
    w->p.classes = w->classes;
    w->p.levels = w->levels;
    w->p.syn = &w->syn;
}

static int check_copy(const ws_copy *w, uint32_t *off, const uint8_t **blob_out, size_t *len_out)
{
    static uint8_t *last;
    free(last);
    size_t len;
    last = build(&w->p, &len);
    *off = 0;
    if (blob_out)
        *blob_out = last;
    if (len_out)
        *len_out = len;
    return sqfw_policy_check(last, len, off);
}

static uint32_t sect_off(const uint8_t *b, uint16_t type) { return le32(b + entry_of(b, type) + SQFW_SECT_OFFSET); }

TEST(parse_rejects_bad_records_with_offsets)
{
    ws_copy w;
    uint32_t off;
    const uint8_t *b;

    ws_clone(&w);
    w.ids[1].id = 1; /* not ascending: duplicate */
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_DUPLICATE);
    CHECK_EQ(off, sect_off(b, SQFW_SECT_IDENTITIES) + SQFW_ID_SIZE + SQFW_ID_ID);

    ws_clone(&w);
    w.ids[2].kind = 9;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_ENUM);
    CHECK_EQ(off, sect_off(b, SQFW_SECT_IDENTITIES) + 2 * SQFW_ID_SIZE + SQFW_ID_KIND);

    ws_clone(&w);
    w.ids[0].class_id = 77;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_CLASS_REF);
    CHECK_EQ(off, sect_off(b, SQFW_SECT_IDENTITIES) + SQFW_ID_CLASS);

    ws_clone(&w);
    memset(w.ids[0].sha256, 0, 32); /* requires a hash but names none */
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_HASH);

    ws_clone(&w);
    w.ids[0].conn_burst = 0;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_RATE);

    ws_clone(&w);
    w.rules[0].prefix = 33;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_PREFIX);
    CHECK_EQ(off, sect_off(b, SQFW_SECT_RULES) + SQFW_RULE_PREFIX);

    ws_clone(&w);
    w.rules[0].addr[2] = 1; /* 10.20.1.0/16 */
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_HOST_BITS);

    ws_clone(&w);
    w.rules[2].port_lo = 9000;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_PORTS);
    CHECK_EQ(off, sect_off(b, SQFW_SECT_RULES) + 2 * SQFW_RULE_SIZE + SQFW_RULE_PORT_LO);

    ws_clone(&w);
    w.rules[3].proto = 1; /* ICMP with a port range */
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_PORTS);

    ws_clone(&w);
    w.rules[4].identity = 99;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_IDENTITY_REF);

    ws_clone(&w);
    w.rules[5].class_id = 12;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_CLASS_REF);

    ws_clone(&w);
    w.rules[6].dir = 0;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_ENUM);

    ws_clone(&w);
    w.rules[6].id = 3; /* rule ids must ascend */
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_DUPLICATE);

    ws_clone(&w);
    w.classes[1].weight = 0;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_RATE);

    ws_clone(&w);
    w.classes[2].id = 1;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_DUPLICATE);

    ws_clone(&w);
    w.levels[2].admit = 0x4 | 0x3; /* more than level 1? no: equal is fine, so widen beyond classes */
    w.levels[2].admit = 0x8;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_CLASS_REF);

    ws_clone(&w);
    w.levels[2].conn_cap = 600; /* higher level must not allow more than the one below */
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_LEVELS);
    CHECK_EQ(off, sect_off(b, SQFW_SECT_LEVELS) + 2 * SQFW_LEVEL_SIZE + SQFW_LEVEL_CONN_CAP);

    ws_clone(&w);
    w.levels[1].admit = 0x1;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_LEVELS); /* level 2 admits class 1 again */

    ws_clone(&w);
    w.p.max_pended = 0;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_SETTINGS);
    CHECK_EQ(off, sect_off(b, SQFW_SECT_SETTINGS) + SQFW_SET_MAX_PENDED);

    ws_clone(&w);
    w.p.initial_level = 3;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_SETTINGS);

    ws_clone(&w);
    w.p.dns = 7;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_ENUM);

    ws_clone(&w);
    w.syn.slots = 1000;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_SETTINGS);

    ws_clone(&w);
    w.syn.v4_prefix = 4;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_PREFIX);

    ws_clone(&w);
    w.p.n_levels = 0;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_SECTION_MISSING);

    ws_clone(&w);
    w.p.n_classes = 0;
    CHECK_EQ(check_copy(&w, &off, &b, NULL), SQFW_E_SECTION_MISSING);
    check_copy(&w, &off, NULL, NULL);
}

TEST(parse_rejects_string_refs_outside_strings)
{
    ws_copy w;
    ws_clone(&w);
    uint32_t off;
    const uint8_t *b;
    size_t len;
    CHECK_EQ(check_copy(&w, &off, &b, &len), SQFW_OK);
    uint8_t *c = malloc(len);
    memcpy(c, b, len);
    uint32_t ids = sect_off(c, SQFW_SECT_IDENTITIES);
    uint32_t strings_len = le32(c + entry_of(c, SQFW_SECT_STRINGS) + SQFW_SECT_LENGTH);
    put32(c + ids + SQFW_ID_NAME_OFF, strings_len - 3);
    qb_fix_crc(c, len);
    expect(c, len, SQFW_E_STRING_REF, ids + SQFW_ID_NAME_OFF);
    free(c);
}

TEST(compile_rejects_duplicate_identity_names)
{
    ws_copy w;
    ws_clone(&w);
    w.ids[3].name = "DNSCACHE"; /* same service as id 3, differing only in case */
    size_t len;
    uint8_t *b = build(&w.p, &len);
    CHECK_EQ(sqfw_policy_check(b, len, NULL), SQFW_OK);
    size_t need;
    uint32_t off;
    CHECK_EQ(sqfw_policy_arena_size(b, len, &need, &off), SQFW_OK);
    void *mem = aligned_alloc(64, (need + 63) & ~(size_t)63);
    sqfw_policy *p;
    CHECK_EQ(sqfw_policy_compile(b, len, mem, need, &p, &off), SQFW_E_DUPLICATE);
    CHECK_EQ(off, sect_off(b, SQFW_SECT_IDENTITIES) + 3 * SQFW_ID_SIZE + SQFW_ID_NAME_OFF);
    CHECK_EQ(sqfw_policy_compile(b, len, mem, need - 8, &p, &off), SQFW_E_NOMEM);
    free(mem);
    free(b);
}

TEST(rejected_push_keeps_the_running_policy)
{
    fx_engine f;
    sqfw_limits l = fx_limits();
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    CHECK_EQ(fx_install(&f, ws(), 1), SQFW_OK);
    size_t len;
    uint8_t *b = build(golden_defs[2].policy, &len);
    b[len - 1] ^= 0xFF;
    uint32_t off;
    CHECK_EQ(fx_install_blob(&f, b, len, 2, &off), SQFW_E_CHECKSUM);
    sqfw_stats s;
    sqfw_get_stats(f.e, &s);
    CHECK_EQ(s.policy_serial, 42);
    CHECK_EQ(s.policy_rules, 7);
    free(b);
    fx_close(&f);
}
