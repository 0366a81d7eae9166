/* Test-side writer of policy blobs in the canonical layout (the same bytes
 * the C# PolicyCompiler must produce): sections in type order, each
 * starting on an 8-byte boundary, zero padding, strings in identity order
 * (name then user) without terminators or de-duplication. */
#ifndef SQFW_BLOB_BUILDER_H
#define SQFW_BLOB_BUILDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct qb_ident {
    uint32_t id;
    uint8_t kind, flags;
    uint16_t class_id;
    const char *name;
    const char *user;
    uint8_t sha256[32];
    uint32_t conn_rate, conn_burst;
} qb_ident;

typedef struct qb_rule {
    uint32_t id, identity;
    uint8_t family, prefix, proto, dir;
    uint16_t port_lo, port_hi;
    uint8_t addr[16];
    uint16_t class_id; /* 0xFFFF = inherit */
} qb_rule;

typedef struct qb_class {
    uint16_t id;
    uint32_t weight;
    uint32_t pkt_rate, pkt_burst, byte_rate, byte_burst, conn_rate, conn_burst;
} qb_class;

typedef struct qb_level {
    uint32_t pkt_cap, conn_cap;
    uint64_t admit;
} qb_level;

typedef struct qb_syn {
    uint32_t per_source_rate, per_source_burst, unproven_rate, unproven_burst, slots;
    uint8_t v4_prefix, v6_prefix;
} qb_syn;

typedef struct qb_policy {
    uint64_t serial;
    uint8_t default_action, pend_timeout_action, loopback, dns, unknown_image;
    uint32_t max_pended, pend_timeout_ms;
    uint16_t initial_level;
    const qb_ident *ids;
    uint32_t n_ids;
    const qb_rule *rules;
    uint32_t n_rules;
    const qb_class *classes;
    uint32_t n_classes;
    const qb_level *levels;
    uint32_t n_levels;
    const qb_syn *syn; /* NULL = no SYN section */
} qb_policy;

/* Returns the blob length; writes only when out has room (cap >= length). */
size_t qb_build(const qb_policy *p, uint8_t *out, size_t cap);
/* Recomputes the header CRC after a test mutated a blob. */
void qb_fix_crc(uint8_t *blob, size_t len);
/* malloc'ed blob; caller frees */
uint8_t *qb_build_alloc(const qb_policy *p, size_t *len);

int qb_parse_addr(const char *text, uint8_t *family, uint8_t addr[16]);

#endif
