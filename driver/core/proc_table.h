/* The processes the kernel announced through its process-create notify,
 * with what the ALE layers cannot tell about them: the service a split
 * svchost instance hosts (from its command line) and the identity of the
 * image file the kernel mapped. Entries live from create to exit notify.
 * Set-associative with fixed memory: a full set gives up its oldest entry
 * that hosts no service; a set full of services refuses the newcomer (it is
 * then attributed by path, as before this table existed). */
#ifndef SQFW_PROC_TABLE_H
#define SQFW_PROC_TABLE_H

#include "sqfw_base.h"

#define SQ_PT_WAYS 8u
#define SQ_PT_SERVICE 64u

typedef struct sq_proc_entry {
    uint64_t key;   /* process key; 0 = empty */
    uint64_t stamp; /* creation order, for eviction */
    uint64_t image_file_id;
    uint32_t image_volume;
    uint32_t pid;
    uint32_t service_len; /* 0: not a single-service svchost */
    uint32_t pad;
    uint8_t service[SQ_PT_SERVICE];
} sq_proc_entry;

typedef struct sq_proc_table {
    sq_proc_entry *e;
    uint32_t sets; /* power of two; 0: no table */
    uint32_t live;
    uint32_t services; /* live entries with a service */
    uint32_t pad;
    uint64_t clock;
    uint64_t evicted;
    uint64_t refused;
} sq_proc_table;

size_t sq_proc_table_bytes(uint32_t cap);
void sq_proc_table_init(sq_proc_table *t, void *mem, uint32_t cap);
const sq_proc_entry *sq_proc_table_find(const sq_proc_table *t, uint64_t key);
/* Records a process (replacing what was kept under its key); service may be
 * NULL. Returns the entry (for the caller's image identity), or NULL when
 * the set is full of services or the arguments are out of range. */
sq_proc_entry *sq_proc_table_put(sq_proc_table *t, uint64_t key, const uint8_t *service, uint32_t service_len);
int sq_proc_table_remove(sq_proc_table *t, uint64_t key);

#endif
