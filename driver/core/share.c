#include "share.h"

uint64_t sq_maxmin_share(uint32_t n, uint64_t admitted, const uint32_t *weight, const uint64_t *want,
                         uint64_t capacity, uint64_t *out)
{
    if (n > 64)
        n = 64;
    uint64_t active = 0;
    for (uint32_t i = 0; i < n; i++) {
        out[i] = 0;
        if (admitted & (1ull << i))
            active |= 1ull << i;
    }
    uint64_t remaining = capacity, total = 0;
    /* Water-filling: each round either satisfies at least one class (fixed at
     * what it wants, then removed) or splits what is left by weight and
     * stops, so there are at most n rounds. */
    while (active && remaining) {
        uint64_t wsum = 0;
        for (uint32_t i = 0; i < n; i++)
            if (active & (1ull << i))
                wsum += weight[i];
        uint64_t used = 0, still = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (!(active & (1ull << i)))
                continue;
            /* remaining <= 2^32 and weight < 2^32: the product fits in 64 bits */
            uint64_t fair = remaining * weight[i] / wsum;
            if (want[i] <= fair) {
                out[i] = want[i];
                used += want[i];
            } else {
                still |= 1ull << i;
            }
        }
        if (still == active) {
            for (uint32_t i = 0; i < n; i++)
                if (active & (1ull << i)) {
                    out[i] = remaining * weight[i] / wsum;
                    total += out[i];
                }
            return total;
        }
        total += used;
        remaining -= used;
        active = still;
    }
    return total;
}
