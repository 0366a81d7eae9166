#include "proc_table.h"
#include "hashmix.h"

static uint32_t sets_for(uint32_t cap)
{
    if (cap == 0)
        return 0;
    uint32_t s = 1;
    while (s * SQ_PT_WAYS < cap)
        s <<= 1;
    return s;
}

size_t sq_proc_table_bytes(uint32_t cap) { return sq_align8((size_t)sets_for(cap) * SQ_PT_WAYS * sizeof(sq_proc_entry)); }

void sq_proc_table_init(sq_proc_table *t, void *mem, uint32_t cap)
{
    sq_zero(t, sizeof *t);
    t->e = (sq_proc_entry *)mem;
    t->sets = sets_for(cap);
    if (t->sets)
        sq_zero(t->e, (size_t)t->sets * SQ_PT_WAYS * sizeof(sq_proc_entry));
}

static sq_proc_entry *set_of(const sq_proc_table *t, uint64_t key)
{
    return &t->e[(sq_mix64(key) & (t->sets - 1)) * SQ_PT_WAYS];
}

const sq_proc_entry *sq_proc_table_find(const sq_proc_table *t, uint64_t key)
{
    if (key == 0 || t->sets == 0)
        return NULL;
    const sq_proc_entry *s = set_of(t, key);
    for (uint32_t i = 0; i < SQ_PT_WAYS; i++)
        if (s[i].key == key)
            return &s[i];
    return NULL;
}

static void clear(sq_proc_table *t, sq_proc_entry *e)
{
    if (e->key) {
        t->live--;
        if (e->service_len)
            t->services--;
    }
    sq_zero(e, sizeof *e);
}

sq_proc_entry *sq_proc_table_put(sq_proc_table *t, uint64_t key, const uint8_t *service, uint32_t service_len)
{
    if (key == 0 || t->sets == 0 || service_len > SQ_PT_SERVICE || (service_len && !service))
        return NULL;
    sq_proc_entry *s = set_of(t, key), *slot = NULL, *victim = NULL;
    for (uint32_t i = 0; i < SQ_PT_WAYS; i++) {
        if (s[i].key == key) {
            slot = &s[i];
            break;
        }
        if (s[i].key == 0) {
            if (!slot)
                slot = &s[i];
        } else if (s[i].service_len == 0 && (!victim || s[i].stamp < victim->stamp)) {
            victim = &s[i];
        }
    }
    if (!slot) {
        if (!victim) {
            t->refused++;
            return NULL;
        }
        slot = victim;
        t->evicted++;
    }
    clear(t, slot);
    slot->key = key;
    slot->stamp = ++t->clock;
    t->live++;
    if (service_len) {
        sq_copy(slot->service, service, service_len);
        slot->service_len = service_len;
        t->services++;
    }
    return slot;
}

int sq_proc_table_remove(sq_proc_table *t, uint64_t key)
{
    sq_proc_entry *e = (sq_proc_entry *)sq_proc_table_find(t, key);
    if (!e)
        return 0;
    clear(t, e);
    return 1;
}
