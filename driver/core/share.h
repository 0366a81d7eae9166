#ifndef SQFW_SHARE_H
#define SQFW_SHARE_H
#include "sqfw_base.h"

/* Weighted max-min fair share of `capacity` (units/s) among the classes in
 * `admitted`: a class never gets more than it wants, and what one leaves
 * is split among the others by weight (QGuard's allocation). want[i] == 0
 * means the class wants nothing now. out[i] is 0 for classes not admitted.
 * n <= 64. Returns the sum allocated (<= capacity). */
uint64_t sq_maxmin_share(uint32_t n, uint64_t admitted, const uint32_t *weight, const uint64_t *want,
                         uint64_t capacity, uint64_t *out);

#endif
