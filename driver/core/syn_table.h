/* Per-source SYN buckets in a bounded, set-associative table. Sources that
 * completed a handshake are "proven" (a spoofed address cannot) and are
 * only evicted by other proven sources, so a flood of spoofed SYNs cannot
 * push a real client out of the table. */
#ifndef SQFW_SYN_TABLE_H
#define SQFW_SYN_TABLE_H

#include "bucket.h"

#define SQ_SYN_WAYS 8u

typedef struct sq_syn_entry {
    uint64_t k1, k2;   /* masked source address */
    sq_tokens tok;
    uint64_t last_seen;
    uint8_t family;    /* 0 = empty */
    uint8_t proven;
    uint8_t pad[6];
} sq_syn_entry;

typedef struct sq_syn_table {
    sq_syn_entry *e;
    uint32_t cap;   /* allocated */
    uint32_t slots; /* in use, power of two <= cap */
    uint64_t seed;
} sq_syn_table;

size_t sq_syn_table_bytes(uint32_t cap);
void sq_syn_table_init(sq_syn_table *t, void *mem, uint32_t cap, uint64_t seed);
void sq_syn_table_reset(sq_syn_table *t, uint32_t slots);
void sq_syn_key(const uint8_t *addr, uint8_t family, uint8_t prefix, uint64_t *k1, uint64_t *k2);
/* Finds the source, or claims a slot for it (evicting the stalest unproven
 * entry of its set; proven entries are evicted only when `proven`). NULL
 * when every way is held by a proven source: the caller treats the source
 * as untracked. */
sq_syn_entry *sq_syn_get(sq_syn_table *t, uint8_t family, uint64_t k1, uint64_t k2, int proven, const sq_rate *r,
                         uint64_t now);

#endif
