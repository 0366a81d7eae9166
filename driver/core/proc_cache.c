#include "proc_cache.h"
#include "hashmix.h"

static uint32_t sets_for(uint32_t cap)
{
    uint32_t s = 1;
    while (s * SQ_PC_WAYS < cap)
        s <<= 1;
    return s;
}

size_t sq_proc_cache_bytes(uint32_t cap) { return sq_align8((size_t)sets_for(cap) * SQ_PC_WAYS * sizeof(sq_pc_entry)); }

void sq_proc_cache_init(sq_proc_cache *c, void *mem, uint32_t cap)
{
    c->e = (sq_pc_entry *)mem;
    c->sets = sets_for(cap);
    sq_zero(c->e, (size_t)c->sets * SQ_PC_WAYS * sizeof(sq_pc_entry));
}

static sq_pc_entry *set_of(const sq_proc_cache *c, uint64_t key)
{
    return &c->e[(sq_mix64(key) & (c->sets - 1)) * SQ_PC_WAYS];
}

const sq_pc_entry *sq_proc_cache_find(const sq_proc_cache *c, uint64_t key)
{
    if (key == 0)
        return NULL;
    const sq_pc_entry *s = set_of(c, key);
    for (uint32_t i = 0; i < SQ_PC_WAYS; i++)
        if (s[i].key == key)
            return &s[i];
    return NULL;
}

int sq_proc_cache_put(sq_proc_cache *c, uint64_t key, const uint8_t *data, uint32_t len, uint64_t now)
{
    if (key == 0 || len > SQ_PC_DATA)
        return 0;
    sq_pc_entry *s = set_of(c, key), *victim = &s[0];
    for (uint32_t i = 0; i < SQ_PC_WAYS; i++) {
        if (s[i].key == key) {
            victim = &s[i];
            break;
        }
        if (s[i].key == 0 || (victim->key != 0 && s[i].stamp < victim->stamp))
            victim = &s[i];
    }
    victim->key = key;
    victim->stamp = now;
    victim->len = len;
    sq_zero(victim->data, SQ_PC_DATA);
    sq_copy(victim->data, data, len);
    return 1;
}

void sq_proc_cache_drop(sq_proc_cache *c, uint64_t key)
{
    sq_pc_entry *e = (sq_pc_entry *)sq_proc_cache_find(c, key);
    if (e)
        sq_zero(e, sizeof *e);
}
