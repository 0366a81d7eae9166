#include "policy_parse.h"
#include "crc32.h"
#include "le.h"
#include "policy_format.h"

#define FAIL(code, off)                                                                                                \
    do {                                                                                                               \
        *err = (uint32_t)(off);                                                                                        \
        return (code);                                                                                                 \
    } while (0)

static const uint32_t record_size[SQFW_SECT_MAX_TYPE + 1] = {
    0, SQFW_SET_SIZE, 1, SQFW_ID_SIZE, SQFW_RULE_SIZE, SQFW_CLASS_SIZE, SQFW_SYN_SIZE, SQFW_LEVEL_SIZE,
};

static const uint32_t max_count[SQFW_SECT_MAX_TYPE + 1] = {
    0, 1, SQFW_MAX_BLOB, SQFW_MAX_IDENTITIES, SQFW_MAX_RULES, SQFW_MAX_CLASSES, 1, SQFW_MAX_LEVELS,
};

static int all_zero(const uint8_t *p, uint32_t n)
{
    uint8_t acc = 0;
    for (uint32_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

static int is_pow2(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* rate 0 means unlimited and then burst must be 0 too; a limited bucket
 * needs room for at least one unit or it would never pass anything. */
static int rate_ok(uint32_t rate, uint32_t burst) { return rate == 0 ? burst == 0 : burst >= 1; }

static int check_header(const uint8_t *b, size_t len, sqfw_blob_view *v, uint32_t *err)
{
    if (len < SQFW_HDR_SIZE)
        FAIL(SQFW_E_TOO_SHORT, 0);
    if (len > SQFW_MAX_BLOB)
        FAIL(SQFW_E_TOO_LONG, 0);
    if (le32(b + SQFW_HDR_MAGIC) != SQFW_MAGIC)
        FAIL(SQFW_E_MAGIC, SQFW_HDR_MAGIC);
    if (le16(b + SQFW_HDR_VERSION) != SQFW_FORMAT_VERSION)
        FAIL(SQFW_E_VERSION, SQFW_HDR_VERSION);
    if (le16(b + SQFW_HDR_HDRSIZE) != SQFW_HDR_SIZE)
        FAIL(SQFW_E_HEADER, SQFW_HDR_HDRSIZE);
    if (le32(b + SQFW_HDR_TOTAL) != len)
        FAIL(SQFW_E_LENGTH, SQFW_HDR_TOTAL);
    if (le16(b + SQFW_HDR_FLAGS) != 0)
        FAIL(SQFW_E_RESERVED, SQFW_HDR_FLAGS);
    if (le32(b + SQFW_HDR_RESERVED) != 0)
        FAIL(SQFW_E_RESERVED, SQFW_HDR_RESERVED);

    static const uint8_t zero4[4] = {0, 0, 0, 0};
    uint32_t crc = sqfw_crc32(0, b, SQFW_HDR_CRC);
    crc = sqfw_crc32(crc, zero4, 4);
    crc = sqfw_crc32(crc, b + SQFW_HDR_CRC + 4, len - SQFW_HDR_CRC - 4);
    if (crc != le32(b + SQFW_HDR_CRC))
        FAIL(SQFW_E_CHECKSUM, SQFW_HDR_CRC);

    v->blob = b;
    v->length = (uint32_t)len;
    v->serial = le64(b + SQFW_HDR_SERIAL);
    return SQFW_OK;
}

static int check_sections(const uint8_t *b, sqfw_blob_view *v, uint32_t *err)
{
    uint32_t n = le16(b + SQFW_HDR_NSECT);
    uint32_t len = v->length;
    if (n == 0 || n > SQFW_SECT_MAX_TYPE)
        FAIL(SQFW_E_SECTION_TABLE, SQFW_HDR_NSECT);
    uint32_t table_end = SQFW_HDR_SIZE + n * SQFW_SECT_ENTRY_SIZE;
    if (table_end > len)
        FAIL(SQFW_E_SECTION_TABLE, SQFW_HDR_NSECT);

    /* order[] holds section types sorted by offset, for overlap and gap checks */
    uint32_t order[SQFW_SECT_MAX_TYPE];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t e = SQFW_HDR_SIZE + i * SQFW_SECT_ENTRY_SIZE;
        uint32_t type = le16(b + e + SQFW_SECT_TYPE);
        uint32_t off = le32(b + e + SQFW_SECT_OFFSET);
        uint32_t slen = le32(b + e + SQFW_SECT_LENGTH);
        uint32_t count = le32(b + e + SQFW_SECT_COUNT);
        if (type == 0 || type > SQFW_SECT_MAX_TYPE)
            FAIL(SQFW_E_SECTION_UNKNOWN, e + SQFW_SECT_TYPE);
        if (le16(b + e + SQFW_SECT_RESERVED) != 0)
            FAIL(SQFW_E_RESERVED, e + SQFW_SECT_RESERVED);
        if (v->s[type].p)
            FAIL(SQFW_E_SECTION_DUPLICATE, e + SQFW_SECT_TYPE);
        if (off % SQFW_SECT_ALIGN)
            FAIL(SQFW_E_SECTION_ALIGN, e + SQFW_SECT_OFFSET);
        /* off <= len and slen <= len - off: no u32 overflow possible */
        if (off < table_end || off > len || slen > len - off)
            FAIL(SQFW_E_SECTION_BOUNDS, e + SQFW_SECT_OFFSET);
        if (count > max_count[type])
            FAIL(SQFW_E_COUNT, e + SQFW_SECT_COUNT);
        if ((uint64_t)count * record_size[type] != slen)
            FAIL(SQFW_E_SECTION_SIZE, e + SQFW_SECT_LENGTH);
        v->s[type].p = b + off;
        v->s[type].offset = off;
        v->s[type].length = slen;
        v->s[type].count = count;
        /* insertion sort by offset; n <= 7 */
        uint32_t j = i;
        while (j > 0 && v->s[order[j - 1]].offset > off) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = type;
    }

    uint32_t cursor = table_end;
    for (uint32_t i = 0; i < n; i++) {
        const sqfw_section_view *s = &v->s[order[i]];
        if (s->offset < cursor)
            FAIL(SQFW_E_SECTION_OVERLAP, s->offset);
        if (!all_zero(b + cursor, s->offset - cursor))
            FAIL(SQFW_E_GAP, cursor);
        cursor = s->offset + s->length;
    }
    if (!all_zero(b + cursor, len - cursor))
        FAIL(SQFW_E_GAP, cursor);

    if (!v->s[SQFW_SECT_SETTINGS].p || v->s[SQFW_SECT_SETTINGS].count != 1)
        FAIL(SQFW_E_SECTION_MISSING, SQFW_HDR_NSECT);
    if (!v->s[SQFW_SECT_CLASSES].p || v->s[SQFW_SECT_CLASSES].count == 0)
        FAIL(SQFW_E_SECTION_MISSING, SQFW_HDR_NSECT);
    if (!v->s[SQFW_SECT_LEVELS].p || v->s[SQFW_SECT_LEVELS].count == 0)
        FAIL(SQFW_E_SECTION_MISSING, SQFW_HDR_NSECT);
    if (v->s[SQFW_SECT_SYN].p && v->s[SQFW_SECT_SYN].count != 1)
        FAIL(SQFW_E_COUNT, v->s[SQFW_SECT_SYN].offset);
    if (v->s[SQFW_SECT_RULES].p && v->s[SQFW_SECT_RULES].count && !v->s[SQFW_SECT_IDENTITIES].p)
        FAIL(SQFW_E_SECTION_MISSING, SQFW_HDR_NSECT);
    return SQFW_OK;
}

/* Returns the class record index for class_id, or -1. Classes are at most
 * 64, so a scan is bounded and this only runs at validation time. */
static int class_index(const sqfw_blob_view *v, uint32_t class_id)
{
    const sqfw_section_view *c = &v->s[SQFW_SECT_CLASSES];
    for (uint32_t i = 0; i < c->count; i++)
        if (le16(c->p + i * SQFW_CLASS_SIZE + SQFW_CLASS_ID) == class_id)
            return (int)i;
    return -1;
}

static int check_classes(const sqfw_blob_view *v, uint32_t *err)
{
    const sqfw_section_view *c = &v->s[SQFW_SECT_CLASSES];
    for (uint32_t i = 0; i < c->count; i++) {
        const uint8_t *r = c->p + i * SQFW_CLASS_SIZE;
        uint32_t at = c->offset + i * SQFW_CLASS_SIZE;
        uint32_t id = le16(r + SQFW_CLASS_ID);
        if (id == SQFW_CLASS_INHERIT)
            FAIL(SQFW_E_CLASS_REF, at + SQFW_CLASS_ID);
        for (uint32_t j = 0; j < i; j++)
            if (le16(c->p + j * SQFW_CLASS_SIZE + SQFW_CLASS_ID) == id)
                FAIL(SQFW_E_DUPLICATE, at + SQFW_CLASS_ID);
        if (le16(r + SQFW_CLASS_FLAGS) != 0)
            FAIL(SQFW_E_RESERVED, at + SQFW_CLASS_FLAGS);
        if (!all_zero(r + SQFW_CLASS_RESERVED, 8))
            FAIL(SQFW_E_RESERVED, at + SQFW_CLASS_RESERVED);
        if (le32(r + SQFW_CLASS_WEIGHT) == 0)
            FAIL(SQFW_E_RATE, at + SQFW_CLASS_WEIGHT);
        if (!rate_ok(le32(r + SQFW_CLASS_PKT_RATE), le32(r + SQFW_CLASS_PKT_BURST)))
            FAIL(SQFW_E_RATE, at + SQFW_CLASS_PKT_BURST);
        if (!rate_ok(le32(r + SQFW_CLASS_BYTE_RATE), le32(r + SQFW_CLASS_BYTE_BURST)))
            FAIL(SQFW_E_RATE, at + SQFW_CLASS_BYTE_BURST);
        if (!rate_ok(le32(r + SQFW_CLASS_CONN_RATE), le32(r + SQFW_CLASS_CONN_BURST)))
            FAIL(SQFW_E_RATE, at + SQFW_CLASS_CONN_BURST);
    }
    return SQFW_OK;
}

static int check_levels(const sqfw_blob_view *v, uint32_t *err)
{
    const sqfw_section_view *l = &v->s[SQFW_SECT_LEVELS];
    uint32_t nclass = v->s[SQFW_SECT_CLASSES].count;
    uint64_t valid = nclass >= 64 ? ~0ull : ((1ull << nclass) - 1);
    uint64_t prev_mask = ~0ull;
    uint64_t prev_pkt = UINT64_MAX, prev_conn = UINT64_MAX;
    for (uint32_t i = 0; i < l->count; i++) {
        const uint8_t *r = l->p + i * SQFW_LEVEL_SIZE;
        uint32_t at = l->offset + i * SQFW_LEVEL_SIZE;
        if (le16(r + SQFW_LEVEL_INDEX) != i)
            FAIL(SQFW_E_LEVELS, at + SQFW_LEVEL_INDEX);
        if (le16(r + SQFW_LEVEL_RESERVED0) != 0)
            FAIL(SQFW_E_RESERVED, at + SQFW_LEVEL_RESERVED0);
        if (le32(r + SQFW_LEVEL_RESERVED1) != 0)
            FAIL(SQFW_E_RESERVED, at + SQFW_LEVEL_RESERVED1);
        uint64_t mask = le64(r + SQFW_LEVEL_ADMIT);
        if (mask & ~valid)
            FAIL(SQFW_E_CLASS_REF, at + SQFW_LEVEL_ADMIT);
        /* QGuard's hierarchy is monotonic: a higher level never admits a
         * class or a rate the level below refused. */
        if (mask & ~prev_mask)
            FAIL(SQFW_E_LEVELS, at + SQFW_LEVEL_ADMIT);
        uint64_t pkt = le32(r + SQFW_LEVEL_PKT_CAP), conn = le32(r + SQFW_LEVEL_CONN_CAP);
        if (pkt == 0)
            pkt = UINT64_MAX;
        if (conn == 0)
            conn = UINT64_MAX;
        if (pkt > prev_pkt)
            FAIL(SQFW_E_LEVELS, at + SQFW_LEVEL_PKT_CAP);
        if (conn > prev_conn)
            FAIL(SQFW_E_LEVELS, at + SQFW_LEVEL_CONN_CAP);
        prev_mask = mask;
        prev_pkt = pkt;
        prev_conn = conn;
    }
    return SQFW_OK;
}

static int check_settings(const sqfw_blob_view *v, uint32_t *err)
{
    const uint8_t *r = v->s[SQFW_SECT_SETTINGS].p;
    uint32_t at = v->s[SQFW_SECT_SETTINGS].offset;
    if (r[SQFW_SET_DEFAULT_ACTION] > SQFW_ACTION_AUDIT)
        FAIL(SQFW_E_ENUM, at + SQFW_SET_DEFAULT_ACTION);
    if (r[SQFW_SET_PEND_TIMEOUT_ACTION] > 1)
        FAIL(SQFW_E_ENUM, at + SQFW_SET_PEND_TIMEOUT_ACTION);
    if (r[SQFW_SET_LOOPBACK] > SQFW_LOOPBACK_ENFORCE)
        FAIL(SQFW_E_ENUM, at + SQFW_SET_LOOPBACK);
    if (r[SQFW_SET_DNS] > SQFW_DNS_ALLOW_CLIENT_SERVICE)
        FAIL(SQFW_E_ENUM, at + SQFW_SET_DNS);
    if (r[SQFW_SET_UNKNOWN_IMAGE] > SQFW_UNKNOWN_PEND_FOR_HASH)
        FAIL(SQFW_E_ENUM, at + SQFW_SET_UNKNOWN_IMAGE);
    if (!all_zero(r + SQFW_SET_RESERVED0, 3))
        FAIL(SQFW_E_RESERVED, at + SQFW_SET_RESERVED0);
    uint32_t mp = le32(r + SQFW_SET_MAX_PENDED);
    if (mp == 0 || mp > SQFW_MAX_PENDED)
        FAIL(SQFW_E_SETTINGS, at + SQFW_SET_MAX_PENDED);
    uint32_t to = le32(r + SQFW_SET_PEND_TIMEOUT_MS);
    if (to == 0 || to > SQFW_MAX_PEND_TIMEOUT_MS)
        FAIL(SQFW_E_SETTINGS, at + SQFW_SET_PEND_TIMEOUT_MS);
    if (le16(r + SQFW_SET_INITIAL_LEVEL) >= v->s[SQFW_SECT_LEVELS].count)
        FAIL(SQFW_E_SETTINGS, at + SQFW_SET_INITIAL_LEVEL);
    if (!all_zero(r + SQFW_SET_RESERVED1, SQFW_SET_SIZE - SQFW_SET_RESERVED1))
        FAIL(SQFW_E_RESERVED, at + SQFW_SET_RESERVED1);
    return SQFW_OK;
}

static int check_syn(const sqfw_blob_view *v, uint32_t *err)
{
    const uint8_t *r = v->s[SQFW_SECT_SYN].p;
    if (!r)
        return SQFW_OK;
    uint32_t at = v->s[SQFW_SECT_SYN].offset;
    if (le32(r + SQFW_SYN_PER_SOURCE_RATE) == 0 || le32(r + SQFW_SYN_PER_SOURCE_BURST) == 0)
        FAIL(SQFW_E_RATE, at + SQFW_SYN_PER_SOURCE_RATE);
    if (!rate_ok(le32(r + SQFW_SYN_UNPROVEN_RATE), le32(r + SQFW_SYN_UNPROVEN_BURST)))
        FAIL(SQFW_E_RATE, at + SQFW_SYN_UNPROVEN_BURST);
    uint32_t slots = le32(r + SQFW_SYN_TABLE_SLOTS);
    if (!is_pow2(slots) || slots < SQFW_MIN_SYN_SLOTS || slots > SQFW_MAX_SYN_SLOTS)
        FAIL(SQFW_E_SETTINGS, at + SQFW_SYN_TABLE_SLOTS);
    if (r[SQFW_SYN_V4_PREFIX] < 8 || r[SQFW_SYN_V4_PREFIX] > 32)
        FAIL(SQFW_E_PREFIX, at + SQFW_SYN_V4_PREFIX);
    if (r[SQFW_SYN_V6_PREFIX] < 32 || r[SQFW_SYN_V6_PREFIX] > 128)
        FAIL(SQFW_E_PREFIX, at + SQFW_SYN_V6_PREFIX);
    if (!all_zero(r + SQFW_SYN_RESERVED, SQFW_SYN_SIZE - SQFW_SYN_RESERVED))
        FAIL(SQFW_E_RESERVED, at + SQFW_SYN_RESERVED);
    return SQFW_OK;
}

static int check_string(const sqfw_blob_view *v, uint32_t off, uint32_t len, uint32_t max)
{
    const sqfw_section_view *s = &v->s[SQFW_SECT_STRINGS];
    if (len == 0 || len > max || !s->p)
        return 0;
    return off <= s->length && len <= s->length - off;
}

/* Ids must be strictly ascending in the blob. That makes uniqueness a
 * linear check with no scratch memory, and lets rules find their identity
 * by binary search. */
static int identity_index(const sqfw_blob_view *v, uint32_t id)
{
    const sqfw_section_view *s = &v->s[SQFW_SECT_IDENTITIES];
    uint32_t lo = 0, hi = s->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t m = le32(s->p + (size_t)mid * SQFW_ID_SIZE + SQFW_ID_ID);
        if (m == id)
            return (int)mid;
        if (m < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int check_identities(const sqfw_blob_view *v, uint32_t *err)
{
    const sqfw_section_view *s = &v->s[SQFW_SECT_IDENTITIES];
    uint32_t prev = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        const uint8_t *r = s->p + (size_t)i * SQFW_ID_SIZE;
        uint32_t at = s->offset + i * SQFW_ID_SIZE;
        uint32_t id = le32(r + SQFW_ID_ID);
        if (id == 0 || id <= prev)
            FAIL(SQFW_E_DUPLICATE, at + SQFW_ID_ID);
        prev = id;
        uint8_t kind = r[SQFW_ID_KIND], flags = r[SQFW_ID_FLAGS];
        if (kind < SQFW_KIND_IMAGE_PATH || kind > SQFW_KIND_SERVICE)
            FAIL(SQFW_E_ENUM, at + SQFW_ID_KIND);
        if (flags & ~SQFW_IDF_ALL)
            FAIL(SQFW_E_ENUM, at + SQFW_ID_FLAGS);
        if ((flags & SQFW_IDF_REQUIRE_HASH) && kind != SQFW_KIND_IMAGE_PATH)
            FAIL(SQFW_E_ENUM, at + SQFW_ID_FLAGS);
        if (class_index(v, le16(r + SQFW_ID_CLASS)) < 0)
            FAIL(SQFW_E_CLASS_REF, at + SQFW_ID_CLASS);
        uint32_t noff = le32(r + SQFW_ID_NAME_OFF), nlen = le32(r + SQFW_ID_NAME_LEN);
        if (kind == SQFW_KIND_IMAGE_HASH) {
            if (noff || nlen)
                FAIL(SQFW_E_STRING_REF, at + SQFW_ID_NAME_OFF);
        } else if (!check_string(v, noff, nlen, SQFW_MAX_NAME)) {
            FAIL(SQFW_E_STRING_REF, at + SQFW_ID_NAME_OFF);
        }
        uint32_t uoff = le32(r + SQFW_ID_USER_OFF), ulen = le32(r + SQFW_ID_USER_LEN);
        if (flags & SQFW_IDF_MATCH_USER) {
            if (!check_string(v, uoff, ulen, SQFW_MAX_USER))
                FAIL(SQFW_E_STRING_REF, at + SQFW_ID_USER_OFF);
        } else if (uoff || ulen) {
            FAIL(SQFW_E_STRING_REF, at + SQFW_ID_USER_OFF);
        }
        int needs_hash = kind == SQFW_KIND_IMAGE_HASH || (flags & SQFW_IDF_REQUIRE_HASH);
        if (needs_hash == all_zero(r + SQFW_ID_SHA256, 32))
            FAIL(SQFW_E_HASH, at + SQFW_ID_SHA256);
        if (!rate_ok(le32(r + SQFW_ID_CONN_RATE), le32(r + SQFW_ID_CONN_BURST)))
            FAIL(SQFW_E_RATE, at + SQFW_ID_CONN_BURST);
        if (!all_zero(r + SQFW_ID_RESERVED, 8))
            FAIL(SQFW_E_RESERVED, at + SQFW_ID_RESERVED);
    }
    return SQFW_OK;
}

static int host_bits_zero(const uint8_t *addr, uint32_t plen, uint32_t bytes)
{
    for (uint32_t i = 0; i < bytes; i++) {
        uint32_t bit0 = i * 8;
        uint8_t keep = bit0 + 8 <= plen ? 0xFF : bit0 >= plen ? 0x00 : (uint8_t)(0xFF << (8 - (plen - bit0)));
        if (addr[i] & (uint8_t)~keep)
            return 0;
    }
    return 1;
}

static int check_rules(const sqfw_blob_view *v, uint32_t *err)
{
    const sqfw_section_view *s = &v->s[SQFW_SECT_RULES];
    uint32_t prev = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        const uint8_t *r = s->p + (size_t)i * SQFW_RULE_SIZE;
        uint32_t at = s->offset + i * SQFW_RULE_SIZE;
        uint32_t id = le32(r + SQFW_RULE_ID);
        if (id == 0 || id <= prev)
            FAIL(SQFW_E_DUPLICATE, at + SQFW_RULE_ID);
        prev = id;
        if (identity_index(v, le32(r + SQFW_RULE_IDENTITY)) < 0)
            FAIL(SQFW_E_IDENTITY_REF, at + SQFW_RULE_IDENTITY);
        uint8_t fam = r[SQFW_RULE_FAMILY], plen = r[SQFW_RULE_PREFIX];
        uint8_t proto = r[SQFW_RULE_PROTO], dir = r[SQFW_RULE_DIR];
        if (fam != 0 && fam != 4 && fam != 6)
            FAIL(SQFW_E_ENUM, at + SQFW_RULE_FAMILY);
        uint32_t maxp = fam == 4 ? 32 : fam == 6 ? 128 : 0;
        if (plen > maxp)
            FAIL(SQFW_E_PREFIX, at + SQFW_RULE_PREFIX);
        uint32_t abytes = fam == 4 ? 4 : fam == 6 ? 16 : 0;
        if (!host_bits_zero(r + SQFW_RULE_ADDR, plen, abytes) || !all_zero(r + SQFW_RULE_ADDR + abytes, 16 - abytes))
            FAIL(SQFW_E_HOST_BITS, at + SQFW_RULE_ADDR);
        if (dir < SQFW_DIR_OUT || dir > SQFW_DIR_BOTH)
            FAIL(SQFW_E_ENUM, at + SQFW_RULE_DIR);
        uint32_t lo = le16(r + SQFW_RULE_PORT_LO), hi = le16(r + SQFW_RULE_PORT_HI);
        if (lo > hi)
            FAIL(SQFW_E_PORTS, at + SQFW_RULE_PORT_LO);
        /* ports only exist for TCP and UDP; anything else must span them all */
        if (proto != 0 && proto != 6 && proto != 17 && (lo != 0 || hi != 0xFFFF))
            FAIL(SQFW_E_PORTS, at + SQFW_RULE_PORT_LO);
        uint32_t cls = le16(r + SQFW_RULE_CLASS);
        if (cls != SQFW_CLASS_INHERIT && class_index(v, cls) < 0)
            FAIL(SQFW_E_CLASS_REF, at + SQFW_RULE_CLASS);
        if (!all_zero(r + SQFW_RULE_RESERVED, SQFW_RULE_SIZE - SQFW_RULE_RESERVED))
            FAIL(SQFW_E_RESERVED, at + SQFW_RULE_RESERVED);
    }
    return SQFW_OK;
}

int sqfw_parse(const uint8_t *blob, size_t len, sqfw_blob_view *v, uint32_t *err)
{
    uint32_t dummy;
    if (!err)
        err = &dummy;
    *err = 0;
    if (!v)
        return SQFW_E_ARG;
    sq_zero(v, sizeof *v);
    if (!blob)
        FAIL(SQFW_E_TOO_SHORT, 0);
    int rc;
    if ((rc = check_header(blob, len, v, err)) != SQFW_OK)
        return rc;
    if ((rc = check_sections(blob, v, err)) != SQFW_OK)
        return rc;
    if ((rc = check_classes(v, err)) != SQFW_OK)
        return rc;
    if ((rc = check_levels(v, err)) != SQFW_OK)
        return rc;
    if ((rc = check_settings(v, err)) != SQFW_OK)
        return rc;
    if ((rc = check_syn(v, err)) != SQFW_OK)
        return rc;
    if ((rc = check_identities(v, err)) != SQFW_OK)
        return rc;
    if ((rc = check_rules(v, err)) != SQFW_OK)
        return rc;
    return SQFW_OK;
}

int sqfw_policy_check(const uint8_t *blob, size_t len, uint32_t *err_offset)
{
    sqfw_blob_view v;
    return sqfw_parse(blob, len, &v, err_offset);
}
