/* Bounded per-process facts from the agent: the attested image hash, or the
 * service name an svchost instance hosts. Set-associative with eviction of
 * the oldest entry in the set, so memory is fixed at engine creation. */
#ifndef SQFW_PROC_CACHE_H
#define SQFW_PROC_CACHE_H

#include "sqfw_base.h"

#define SQ_PC_WAYS 4u
#define SQ_PC_DATA 64u

typedef struct sq_pc_entry {
    uint64_t key; /* process key; 0 = empty */
    uint64_t stamp;
    uint32_t len;
    uint32_t pad;
    uint8_t data[SQ_PC_DATA];
} sq_pc_entry;

typedef struct sq_proc_cache {
    sq_pc_entry *e;
    uint32_t sets; /* power of two */
} sq_proc_cache;

size_t sq_proc_cache_bytes(uint32_t cap);
void sq_proc_cache_init(sq_proc_cache *c, void *mem, uint32_t cap);
const sq_pc_entry *sq_proc_cache_find(const sq_proc_cache *c, uint64_t key);
void sq_proc_cache_drop(sq_proc_cache *c, uint64_t key);
int sq_proc_cache_put(sq_proc_cache *c, uint64_t key, const uint8_t *data, uint32_t len, uint64_t now);

#endif
