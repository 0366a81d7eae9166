#include "syn_table.h"
#include "hashmix.h"
#include "le.h"

size_t sq_syn_table_bytes(uint32_t cap) { return sq_align8((size_t)cap * sizeof(sq_syn_entry)); }

void sq_syn_table_init(sq_syn_table *t, void *mem, uint32_t cap, uint64_t seed)
{
    t->e = (sq_syn_entry *)mem;
    t->cap = cap;
    t->seed = seed;
    sq_syn_table_reset(t, 0);
}

void sq_syn_table_reset(sq_syn_table *t, uint32_t slots)
{
    if (slots > t->cap)
        slots = t->cap;
    t->slots = slots;
    sq_zero(t->e, (size_t)t->cap * sizeof(sq_syn_entry));
}

void sq_syn_key(const uint8_t *addr, uint8_t family, uint8_t prefix, uint64_t *k1, uint64_t *k2)
{
    uint8_t m[16] = {0};
    uint32_t bytes = family == 4 ? 4 : 16;
    for (uint32_t i = 0; i < bytes; i++) {
        uint32_t bit0 = i * 8;
        uint8_t keep = bit0 + 8 <= prefix ? 0xFF : bit0 >= prefix ? 0x00 : (uint8_t)(0xFF << (8 - (prefix - bit0)));
        m[i] = addr[i] & keep;
    }
    *k1 = le64(m);
    *k2 = le64(m + 8);
}

sq_syn_entry *sq_syn_get(sq_syn_table *t, uint8_t family, uint64_t k1, uint64_t k2, int proven, const sq_rate *r,
                         uint64_t now)
{
    if (t->slots < SQ_SYN_WAYS)
        return NULL;
    uint64_t w[3] = {k1, k2, family};
    /* keyed by a per-boot secret: a spoofer cannot aim at one set */
    uint32_t set = (uint32_t)(sq_hash_words(w, 3, t->seed) & (t->slots - 1)) & ~(SQ_SYN_WAYS - 1);
    sq_syn_entry *victim = NULL;
    for (uint32_t i = 0; i < SQ_SYN_WAYS; i++) {
        sq_syn_entry *e = &t->e[set + i];
        if (e->family == family && e->k1 == k1 && e->k2 == k2) {
            e->last_seen = now;
            return e;
        }
        if (e->family == 0) {
            if (!victim || victim->family != 0)
                victim = e;
            continue;
        }
        if (victim && victim->family == 0)
            continue;
        /* prefer the stalest unproven; proven ones only for a proven newcomer */
        if (!e->proven) {
            if (!victim || victim->proven || e->last_seen < victim->last_seen)
                victim = e;
        } else if (proven && (!victim || (victim->proven && e->last_seen < victim->last_seen))) {
            victim = e;
        }
    }
    if (!victim)
        return NULL;
    victim->family = family;
    victim->k1 = k1;
    victim->k2 = k2;
    victim->proven = 0;
    victim->last_seen = now;
    sq_tokens_full(&victim->tok, r, now);
    return victim;
}
