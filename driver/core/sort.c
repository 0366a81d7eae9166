#include "sort.h"

static void sift_down(uint32_t *a, uint32_t start, uint32_t end, sq_cmp_fn cmp, const void *ctx)
{
    uint32_t root = start;
    for (;;) {
        uint64_t child = 2ull * root + 1;
        if (child >= end)
            return;
        uint32_t c = (uint32_t)child;
        if (c + 1 < end && cmp(ctx, a[c], a[c + 1]) < 0)
            c++;
        if (cmp(ctx, a[root], a[c]) >= 0)
            return;
        uint32_t t = a[root];
        a[root] = a[c];
        a[c] = t;
        root = c;
    }
}

void sq_heapsort(uint32_t *a, uint32_t n, sq_cmp_fn cmp, const void *ctx)
{
    if (n < 2)
        return;
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(a, i, n, cmp, ctx);
    for (uint32_t end = n - 1; end > 0; end--) {
        uint32_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end, cmp, ctx);
    }
}
