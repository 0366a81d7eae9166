#include "golden_defs.h"

#include "../core/policy_format.h"

#define SHA_AGENT                                                                                                      \
    {0xd4, 0xf0, 0xbc, 0x5a, 0x29, 0xde, 0x06, 0xb5, 0x10, 0xf9, 0xaa, 0x42, 0x8f, 0x1e, 0xed, 0xba,                    \
     0x92, 0x60, 0x12, 0xb5, 0x91, 0xfe, 0xf7, 0xa5, 0x18, 0xe7, 0x76, 0xa7, 0xc9, 0xbd, 0x18, 0x24}
#define SHA_TOOL                                                                                                       \
    {0x7c, 0x9b, 0xbe, 0x5e, 0xc9, 0xb3, 0xfb, 0x77, 0x4e, 0x8f, 0xa0, 0xf5, 0x42, 0x47, 0xe9, 0x3c,                    \
     0x34, 0xdd, 0xf8, 0xe5, 0xd1, 0x6f, 0xe3, 0x07, 0x34, 0x20, 0xde, 0x0a, 0xe8, 0x1a, 0x26, 0x2d}

#define ALL_CLASSES(n) ((1ull << (n)) - 1)

/* ---- minimal: one class, one level, nothing allowed ---- */
static const qb_class min_classes[] = {{.id = 0, .weight = 1}};
static const qb_level min_levels[] = {{.admit = 1}};
static const qb_policy minimal = {
    .serial = 1, .max_pended = 1, .pend_timeout_ms = 1000,
    .classes = min_classes, .n_classes = 1, .levels = min_levels, .n_levels = 1,
};

/* ---- workstation: the typical endpoint ---- */
static const qb_class ws_classes[] = {
    {.id = 0, .weight = 1},
    {.id = 1, .weight = 4, .pkt_rate = 5000, .pkt_burst = 500, .byte_rate = 10000000, .byte_burst = 1000000,
     .conn_rate = 100, .conn_burst = 20},
    {.id = 2, .weight = 1, .pkt_rate = 1000, .pkt_burst = 100, .byte_rate = 2000000, .byte_burst = 200000,
     .conn_rate = 20, .conn_burst = 5},
};
static const qb_ident ws_ids[] = {
    {.id = 1, .kind = SQFW_KIND_IMAGE_PATH, .flags = SQFW_IDF_REQUIRE_HASH, .class_id = 1,
     .name = "\\device\\harddiskvolume2\\program files\\sieveq\\agent.exe", .sha256 = SHA_AGENT, .conn_rate = 50,
     .conn_burst = 10},
    {.id = 2, .kind = SQFW_KIND_IMAGE_PATH, .flags = SQFW_IDF_MATCH_USER, .class_id = 2,
     .name = "\\device\\harddiskvolume2\\windows\\system32\\curl.exe", .user = "S-1-5-21-1000-1000-1000-1001"},
    {.id = 3, .kind = SQFW_KIND_SERVICE, .class_id = 0, .name = "Dnscache"},
    {.id = 4, .kind = SQFW_KIND_SERVICE, .class_id = 2, .name = "wuauserv"},
};
static const qb_rule ws_rules[] = {
    {.id = 1, .identity = 1, .family = 4, .prefix = 16, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 443,
     .port_hi = 443, .addr = {10, 20}, .class_id = SQFW_CLASS_INHERIT},
    {.id = 2, .identity = 1, .family = 6, .prefix = 32, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 443,
     .port_hi = 443, .addr = {0x20, 0x01, 0x0d, 0xb8}, .class_id = SQFW_CLASS_INHERIT},
    {.id = 3, .identity = 1, .family = 4, .prefix = 24, .proto = 6, .dir = SQFW_DIR_IN, .port_lo = 8443,
     .port_hi = 8443, .addr = {10, 20, 30}, .class_id = 1},
    {.id = 4, .identity = 2, .family = 4, .prefix = 0, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 80, .port_hi = 80,
     .class_id = SQFW_CLASS_INHERIT},
    {.id = 5, .identity = 2, .family = 4, .prefix = 0, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 443,
     .port_hi = 443, .class_id = SQFW_CLASS_INHERIT},
    {.id = 6, .identity = 3, .family = 0, .prefix = 0, .proto = 17, .dir = SQFW_DIR_OUT, .port_lo = 53, .port_hi = 53,
     .class_id = SQFW_CLASS_INHERIT},
    {.id = 7, .identity = 4, .family = 4, .prefix = 24, .proto = 6, .dir = SQFW_DIR_OUT, .port_lo = 443,
     .port_hi = 443, .addr = {13, 107, 4}, .class_id = SQFW_CLASS_INHERIT},
};
static const qb_syn ws_syn = {.per_source_rate = 5, .per_source_burst = 10, .unproven_rate = 200,
                              .unproven_burst = 50, .slots = 1024, .v4_prefix = 32, .v6_prefix = 64};
static const qb_level ws_levels[] = {
    {.admit = ALL_CLASSES(3)},
    {.pkt_cap = 20000, .conn_cap = 500, .admit = ALL_CLASSES(3)},
    {.pkt_cap = 5000, .conn_cap = 100, .admit = 0x3},
};
static const qb_policy workstation = {
    .serial = 42, .default_action = SQFW_ACTION_ENFORCE, .pend_timeout_action = 0, .loopback = SQFW_LOOPBACK_ALLOW,
    .dns = SQFW_DNS_ALLOW_CLIENT_SERVICE, .unknown_image = SQFW_UNKNOWN_BLOCK, .max_pended = 64,
    .pend_timeout_ms = 2000, .initial_level = 0,
    .ids = ws_ids, .n_ids = 4, .rules = ws_rules, .n_rules = 7, .classes = ws_classes, .n_classes = 3,
    .levels = ws_levels, .n_levels = 3, .syn = &ws_syn,
};

/* ---- audit-v6: audit mode, hash-only identity, v6 and overlapping ranges ---- */
static const qb_class av_classes[] = {{.id = 0, .weight = 1}, {.id = 5, .weight = 2, .conn_rate = 10, .conn_burst = 2}};
static const qb_ident av_ids[] = {
    {.id = 7, .kind = SQFW_KIND_IMAGE_HASH, .class_id = 5, .sha256 = SHA_TOOL},
    {.id = 9, .kind = SQFW_KIND_IMAGE_PATH, .class_id = 0, .name = "\\device\\mup\\share\\tool.exe"},
};
static const qb_rule av_rules[] = {
    {.id = 10, .identity = 7, .family = 6, .prefix = 8, .proto = 0, .dir = SQFW_DIR_BOTH, .port_lo = 0,
     .port_hi = 65535, .addr = {0xfd}, .class_id = SQFW_CLASS_INHERIT},
    {.id = 20, .identity = 9, .family = 4, .prefix = 24, .proto = 17, .dir = SQFW_DIR_OUT, .port_lo = 5000,
     .port_hi = 6000, .addr = {192, 168, 1}, .class_id = SQFW_CLASS_INHERIT},
    {.id = 21, .identity = 9, .family = 4, .prefix = 25, .proto = 17, .dir = SQFW_DIR_OUT, .port_lo = 5500,
     .port_hi = 5600, .addr = {192, 168, 1, 128}, .class_id = 5},
};
static const qb_level av_levels[] = {{.admit = 0x3}, {.conn_cap = 5, .admit = 0x2}};
static const qb_policy audit_v6 = {
    .serial = 0x0102030405060708ull, .default_action = SQFW_ACTION_AUDIT, .pend_timeout_action = 1,
    .loopback = SQFW_LOOPBACK_ENFORCE, .dns = SQFW_DNS_BY_RULES, .unknown_image = SQFW_UNKNOWN_PEND_FOR_HASH,
    .max_pended = 16, .pend_timeout_ms = 500, .initial_level = 0,
    .ids = av_ids, .n_ids = 2, .rules = av_rules, .n_rules = 3, .classes = av_classes, .n_classes = 2,
    .levels = av_levels, .n_levels = 2,
};

const golden_def golden_defs[] = {
    {"minimal", &minimal},
    {"workstation", &workstation},
    {"audit-v6", &audit_v6},
};
const unsigned golden_count = sizeof golden_defs / sizeof golden_defs[0];
