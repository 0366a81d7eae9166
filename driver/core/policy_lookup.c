#include "hashmix.h"
#include "le.h"
#include "policy_lookup.h"

uint64_t sq_string_hash(int kind, const uint8_t *key, uint32_t len)
{
    if (kind == SQFW_KIND_IMAGE_HASH)
        return sq_mix64(le64(key) ^ le64(key + 8));
    return sq_hash_bytes_fold(key, len) ^ (uint64_t)kind;
}

/* The three words are multiplied independently (in parallel on the CPU)
 * and mixed once: a lookup hashes up to two keys per prefix length, so a
 * chain of three full mixes per key was a measurable part of its cost. The
 * table is filled only from the policy, so collisions cost probe length,
 * never correctness. */
uint64_t sq_entry_hash(uint64_t k0, uint64_t k1, uint64_t k2)
{
    return sq_mix64(k0 * 0x9e3779b97f4a7c15ull ^ k1 * 0xc2b2ae3d27d4eb4full ^ k2 * 0x165667b19e3779f9ull);
}

int sq_ident_matches(const sq_ident *id, int kind, const uint8_t *key, uint32_t len)
{
    if (kind == SQFW_KIND_IMAGE_HASH)
        return sq_equal(id->sha256, key, 32);
    return id->name_len == len && sq_equal_fold(id->name, key, len);
}

int sq_find_identity(const sqfw_policy *p, const sq_strtab *t, int kind, const uint8_t *key, uint32_t len)
{
    if (!key || (kind != SQFW_KIND_IMAGE_HASH && len == 0))
        return -1;
    uint64_t h = sq_string_hash(kind, key, len);
    for (uint32_t i = 0; i <= t->max_probe; i++) {
        uint32_t s = t->slots[(h + i) & t->mask];
        if (s == 0)
            return -1;
        const sq_ident *id = &p->ident[s - 1];
        if (sq_ident_matches(id, kind, key, len))
            return (int)(s - 1);
    }
    return -1;
}

int sq_class_index(const sqfw_policy *p, uint32_t class_id)
{
    for (uint32_t i = 0; i < p->n_class; i++)
        if (p->cls[i].id == class_id)
            return (int)i;
    return -1;
}
