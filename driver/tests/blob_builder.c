#define _POSIX_C_SOURCE 200809L
#include "blob_builder.h"

#ifdef _WIN32
#include <ws2tcpip.h> /* the Wine harness builds policies with it */
#else
#include <arpa/inet.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "../core/crc32.h"
#include "../core/le.h"
#include "../core/policy_format.h"

static size_t a8(size_t n) { return (n + 7) & ~(size_t)7; }

size_t qb_build(const qb_policy *p, uint8_t *out, size_t cap)
{
    size_t strings = 0;
    for (uint32_t i = 0; i < p->n_ids; i++)
        strings += (p->ids[i].name ? strlen(p->ids[i].name) : 0) + (p->ids[i].user ? strlen(p->ids[i].user) : 0);

    struct sect_plan {
        uint16_t type;
        size_t len;
        uint32_t count;
    } sect[7];
    int n = 0;
    sect[n++] = (struct sect_plan){SQFW_SECT_SETTINGS, SQFW_SET_SIZE, 1};
    if (strings)
        sect[n++] = (struct sect_plan){SQFW_SECT_STRINGS, strings, (uint32_t)strings};
    if (p->n_ids)
        sect[n++] = (struct sect_plan){SQFW_SECT_IDENTITIES, (size_t)p->n_ids * SQFW_ID_SIZE, p->n_ids};
    if (p->n_rules)
        sect[n++] = (struct sect_plan){SQFW_SECT_RULES, (size_t)p->n_rules * SQFW_RULE_SIZE, p->n_rules};
    sect[n++] = (struct sect_plan){SQFW_SECT_CLASSES, (size_t)p->n_classes * SQFW_CLASS_SIZE, p->n_classes};
    if (p->syn)
        sect[n++] = (struct sect_plan){SQFW_SECT_SYN, SQFW_SYN_SIZE, 1};
    sect[n++] = (struct sect_plan){SQFW_SECT_LEVELS, (size_t)p->n_levels * SQFW_LEVEL_SIZE, p->n_levels};

    size_t off[7], pos = SQFW_HDR_SIZE + (size_t)n * SQFW_SECT_ENTRY_SIZE;
    for (int i = 0; i < n; i++) {
        pos = a8(pos);
        off[i] = pos;
        pos += sect[i].len;
    }
    size_t total = a8(pos);
    if (!out || cap < total)
        return total;
    memset(out, 0, total);

    put32(out + SQFW_HDR_MAGIC, SQFW_MAGIC);
    put16(out + SQFW_HDR_VERSION, SQFW_FORMAT_VERSION);
    put16(out + SQFW_HDR_HDRSIZE, SQFW_HDR_SIZE);
    put32(out + SQFW_HDR_TOTAL, (uint32_t)total);
    put16(out + SQFW_HDR_NSECT, (uint16_t)n);
    put64(out + SQFW_HDR_SERIAL, p->serial);
    for (int i = 0; i < n; i++) {
        uint8_t *e = out + SQFW_HDR_SIZE + i * SQFW_SECT_ENTRY_SIZE;
        put16(e + SQFW_SECT_TYPE, sect[i].type);
        put32(e + SQFW_SECT_OFFSET, (uint32_t)off[i]);
        put32(e + SQFW_SECT_LENGTH, (uint32_t)sect[i].len);
        put32(e + SQFW_SECT_COUNT, sect[i].count);
    }

    for (int i = 0; i < n; i++) {
        uint8_t *s = out + off[i];
        switch (sect[i].type) {
        case SQFW_SECT_SETTINGS:
            s[SQFW_SET_DEFAULT_ACTION] = p->default_action;
            s[SQFW_SET_PEND_TIMEOUT_ACTION] = p->pend_timeout_action;
            s[SQFW_SET_LOOPBACK] = p->loopback;
            s[SQFW_SET_DNS] = p->dns;
            s[SQFW_SET_UNKNOWN_IMAGE] = p->unknown_image;
            put32(s + SQFW_SET_MAX_PENDED, p->max_pended);
            put32(s + SQFW_SET_PEND_TIMEOUT_MS, p->pend_timeout_ms);
            put16(s + SQFW_SET_INITIAL_LEVEL, p->initial_level);
            break;
        case SQFW_SECT_STRINGS: {
            size_t at = 0;
            for (uint32_t k = 0; k < p->n_ids; k++) {
                const char *parts[2] = {p->ids[k].name, p->ids[k].user};
                for (int j = 0; j < 2; j++)
                    if (parts[j]) {
                        memcpy(s + at, parts[j], strlen(parts[j]));
                        at += strlen(parts[j]);
                    }
            }
            break;
        }
        case SQFW_SECT_IDENTITIES: {
            uint32_t at = 0;
            for (uint32_t k = 0; k < p->n_ids; k++) {
                const qb_ident *d = &p->ids[k];
                uint8_t *r = s + (size_t)k * SQFW_ID_SIZE;
                put32(r + SQFW_ID_ID, d->id);
                r[SQFW_ID_KIND] = d->kind;
                r[SQFW_ID_FLAGS] = d->flags;
                put16(r + SQFW_ID_CLASS, d->class_id);
                if (d->name) {
                    put32(r + SQFW_ID_NAME_OFF, at);
                    put32(r + SQFW_ID_NAME_LEN, (uint32_t)strlen(d->name));
                    at += (uint32_t)strlen(d->name);
                }
                if (d->user) {
                    put32(r + SQFW_ID_USER_OFF, at);
                    put32(r + SQFW_ID_USER_LEN, (uint32_t)strlen(d->user));
                    at += (uint32_t)strlen(d->user);
                }
                memcpy(r + SQFW_ID_SHA256, d->sha256, 32);
                put32(r + SQFW_ID_CONN_RATE, d->conn_rate);
                put32(r + SQFW_ID_CONN_BURST, d->conn_burst);
            }
            break;
        }
        case SQFW_SECT_RULES:
            for (uint32_t k = 0; k < p->n_rules; k++) {
                const qb_rule *d = &p->rules[k];
                uint8_t *r = s + (size_t)k * SQFW_RULE_SIZE;
                put32(r + SQFW_RULE_ID, d->id);
                put32(r + SQFW_RULE_IDENTITY, d->identity);
                r[SQFW_RULE_FAMILY] = d->family;
                r[SQFW_RULE_PREFIX] = d->prefix;
                r[SQFW_RULE_PROTO] = d->proto;
                r[SQFW_RULE_DIR] = d->dir;
                put16(r + SQFW_RULE_PORT_LO, d->port_lo);
                put16(r + SQFW_RULE_PORT_HI, d->port_hi);
                memcpy(r + SQFW_RULE_ADDR, d->addr, 16);
                put16(r + SQFW_RULE_CLASS, d->class_id);
            }
            break;
        case SQFW_SECT_CLASSES:
            for (uint32_t k = 0; k < p->n_classes; k++) {
                const qb_class *d = &p->classes[k];
                uint8_t *r = s + (size_t)k * SQFW_CLASS_SIZE;
                put16(r + SQFW_CLASS_ID, d->id);
                put32(r + SQFW_CLASS_WEIGHT, d->weight);
                put32(r + SQFW_CLASS_PKT_RATE, d->pkt_rate);
                put32(r + SQFW_CLASS_PKT_BURST, d->pkt_burst);
                put32(r + SQFW_CLASS_BYTE_RATE, d->byte_rate);
                put32(r + SQFW_CLASS_BYTE_BURST, d->byte_burst);
                put32(r + SQFW_CLASS_CONN_RATE, d->conn_rate);
                put32(r + SQFW_CLASS_CONN_BURST, d->conn_burst);
            }
            break;
        case SQFW_SECT_SYN:
            put32(s + SQFW_SYN_PER_SOURCE_RATE, p->syn->per_source_rate);
            put32(s + SQFW_SYN_PER_SOURCE_BURST, p->syn->per_source_burst);
            put32(s + SQFW_SYN_UNPROVEN_RATE, p->syn->unproven_rate);
            put32(s + SQFW_SYN_UNPROVEN_BURST, p->syn->unproven_burst);
            put32(s + SQFW_SYN_TABLE_SLOTS, p->syn->slots);
            s[SQFW_SYN_V4_PREFIX] = p->syn->v4_prefix;
            s[SQFW_SYN_V6_PREFIX] = p->syn->v6_prefix;
            break;
        case SQFW_SECT_LEVELS:
            for (uint32_t k = 0; k < p->n_levels; k++) {
                uint8_t *r = s + (size_t)k * SQFW_LEVEL_SIZE;
                put16(r + SQFW_LEVEL_INDEX, (uint16_t)k);
                put32(r + SQFW_LEVEL_PKT_CAP, p->levels[k].pkt_cap);
                put32(r + SQFW_LEVEL_CONN_CAP, p->levels[k].conn_cap);
                put64(r + SQFW_LEVEL_ADMIT, p->levels[k].admit);
            }
            break;
        }
    }
    qb_fix_crc(out, total);
    return total;
}

void qb_fix_crc(uint8_t *b, size_t len)
{
    if (len < SQFW_HDR_SIZE)
        return;
    put32(b + SQFW_HDR_CRC, 0);
    put32(b + SQFW_HDR_CRC, sqfw_crc32(0, b, len));
}

uint8_t *qb_build_alloc(const qb_policy *p, size_t *len)
{
    size_t n = qb_build(p, NULL, 0);
    uint8_t *b = malloc(n);
    if (!b)
        return NULL;
    qb_build(p, b, n);
    *len = n;
    return b;
}

int qb_parse_addr(const char *text, uint8_t *family, uint8_t addr[16])
{
    memset(addr, 0, 16);
    if (inet_pton(AF_INET, text, addr) == 1) {
        *family = 4;
        return 1;
    }
    if (inet_pton(AF_INET6, text, addr) == 1) {
        *family = 6;
        return 1;
    }
    return 0;
}
