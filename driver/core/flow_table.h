/* Flow contexts from a fixed pool: the WFP flow handle maps to identity,
 * class and counters, so packets after the ALE decision need no lookup in
 * the policy. Allocation and release are O(1); nothing grows. */
#ifndef SQFW_FLOW_TABLE_H
#define SQFW_FLOW_TABLE_H

#include "sqfw_base.h"

typedef struct sq_flow {
    uint64_t flow_id;
    uint64_t packets;
    uint64_t bytes;
    uint32_t identity_id;
    uint32_t refs;
    uint32_t next;       /* hash chain or free list, index + 1 */
    uint32_t policy_gen; /* class_idx is valid for this generation */
    uint16_t class_id;
    uint16_t class_idx;
    uint8_t direction, protocol, family, in_use;
} sq_flow;

typedef struct sq_flow_table {
    sq_flow *pool;
    uint32_t *heads; /* index + 1, 0 = empty */
    uint32_t cap, mask, free_head, active;
} sq_flow_table;

size_t sq_flow_table_bytes(uint32_t cap);
void sq_flow_table_init(sq_flow_table *t, void *mem, uint32_t cap);
sq_flow *sq_flow_find(sq_flow_table *t, uint64_t flow_id);
/* NULL when the pool is exhausted or the id exists already. */
sq_flow *sq_flow_alloc(sq_flow_table *t, uint64_t flow_id);
void sq_flow_free(sq_flow_table *t, sq_flow *f);

#endif
