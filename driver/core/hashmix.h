/* 64-bit mixing for the lookup tables. Tables built from the policy are only
 * probed by packet data, never filled by it, so an unkeyed mix is enough
 * there; the SYN table is filled by remote (spoofable) addresses and so mixes
 * in a per-boot secret seed. */
#ifndef SQFW_HASHMIX_H
#define SQFW_HASHMIX_H
#include "sqfw_base.h"

static inline uint64_t sq_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static inline uint64_t sq_hash_bytes_fold(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= sq_fold(p[i]);
        h *= 0x100000001b3ull;
    }
    return sq_mix64(h ^ n);
}

static inline uint64_t sq_hash_words(const uint64_t *w, size_t n, uint64_t seed)
{
    uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++)
        h = sq_mix64(h ^ w[i]) + 0x9e3779b97f4a7c15ull;
    return h;
}

#endif
