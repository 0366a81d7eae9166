#ifndef SQFW_SORT_H
#define SQFW_SORT_H
#include "sqfw_base.h"

/* In-place heapsort of u32 items: O(n log n) worst case with no extra
 * memory and no recursion, which is what kernel stacks need. */
typedef int (*sq_cmp_fn)(const void *ctx, uint32_t a, uint32_t b);
void sq_heapsort(uint32_t *items, uint32_t n, sq_cmp_fn cmp, const void *ctx);

#endif
