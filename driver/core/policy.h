/* The compiled policy: lookup structures built once from a validated blob
 * inside one caller-provided arena, plus the per-class and per-application
 * bucket state that belongs to this policy generation. */
#ifndef SQFW_POLICY_H
#define SQFW_POLICY_H

#include "bucket.h"
#include "policy_format.h"
#include "sqfw.h"

typedef struct sq_ident {
    uint32_t id;
    uint8_t kind;
    uint8_t flags;
    uint16_t class_idx;
    const uint8_t *name;
    const uint8_t *user;
    uint32_t name_len;
    uint32_t user_len;
    uint8_t sha256[32];
    /* Prefix lengths used by this identity's rules: the lookup probes only
     * these, longest first, so its cost is bounded by 33 (v4) / 129 (v6)
     * lengths whatever the rule count. *_lens: rules naming a protocol;
     * *_any_lens: any-protocol rules, so the second probe per length runs
     * only where such rules exist. */
    uint64_t v4_lens, v4_any_lens;
    uint64_t v6_lens[3], v6_any_lens[3];
    sq_rate conn_rate;
    sq_tokens conn;
} sq_ident;

typedef struct sq_rule {
    uint32_t id;
    uint32_t ident_idx;
    uint16_t class_idx; /* resolved: inherit replaced by the identity's */
    uint16_t port_lo;
    uint16_t port_hi;
    uint8_t family;
    uint8_t prefix;
    uint8_t proto;
    uint8_t dir;
    uint8_t pad[2];
} sq_rule;

/* One (identity, family, protocol, direction, prefix) key with its rules'
 * port ranges flattened into disjoint elementary intervals. */
typedef struct sq_pentry {
    uint64_t k0; /* ident_idx | family << 32 | proto << 40 | dir << 48 | prefix << 56 */
    uint64_t k1, k2; /* masked address */
    uint32_t iv_first;
    uint32_t iv_count;
} sq_pentry;

/* Interval [start, next start - 1] decided by rule rule_idx (or none). */
typedef struct sq_iv {
    uint32_t start;
    uint32_t rule_idx;
} sq_iv;
#define SQ_NO_RULE 0xFFFFFFFFu

typedef struct sq_class {
    uint16_t id;
    uint16_t pad;
    uint32_t weight;
    uint32_t cfg_pkt_rate, cfg_pkt_burst;
    uint32_t cfg_byte_rate, cfg_byte_burst;
    uint32_t cfg_conn_rate, cfg_conn_burst;
    sq_rate pkt_rate, byte_rate, conn_rate; /* effective: configured, capped by the level's share */
    sq_tokens pkt, bytes, conn;
    sq_tokens syn_unproven; /* SYNs from sources without a completed handshake, per class */
    uint64_t pkt_arrivals, conn_arrivals;   /* since the last tick */
    uint64_t pkt_demand, conn_demand;       /* EWMA of arrivals per second */
    uint64_t pkt_accepted, conn_accepted;
} sq_class;

typedef struct sq_level {
    uint32_t pkt_cap, conn_cap;
    uint64_t admit;
} sq_level;

typedef struct sq_strtab {
    uint32_t *slots; /* identity index + 1, 0 = empty */
    uint32_t mask;
    uint32_t max_probe;
} sq_strtab;

struct sqfw_policy {
    uint64_t serial;
    uint32_t gen;
    uint8_t default_action, pend_timeout_action, loopback, dns, unknown_image;
    uint8_t has_hash_identities, has_syn, pad;
    uint32_t max_pended, pend_timeout_ms, initial_level;

    uint32_t n_ident;
    sq_ident *ident;
    sq_strtab path_tab, svc_tab, sha_tab;

    uint32_t n_rules;
    sq_rule *rules;
    uint32_t n_entries;
    sq_pentry *entries;
    uint32_t *ent_slots;
    uint32_t ent_mask, ent_max_probe;
    uint32_t n_iv;
    sq_iv *iv;

    uint32_t n_class;
    sq_class *cls;
    uint32_t n_level;
    sq_level *lvl;

    sq_rate syn_source, syn_unproven;
    uint32_t syn_slots;
    uint8_t syn_v4_prefix, syn_v6_prefix;

    uint8_t *strings;
    uint32_t strings_len;
};

/* lookups used by the classifier: policy_lookup.h */

#endif
