/* Freestanding basics shared by every core file. The core is compiled into
 * the Windows kernel driver as well as user-mode Linux, so it includes
 * nothing but compiler-provided headers. */
#ifndef SQFW_BASE_H
#define SQFW_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifndef SQFW_API
#if defined(SQFW_SHARED) && defined(__GNUC__)
#define SQFW_API __attribute__((visibility("default")))
#else
#define SQFW_API
#endif
#endif

#define SQFW_UNUSED(x) ((void)(x))

/* A read hint: lets independent table probes miss the cache in parallel
 * instead of one after another. Never changes results. */
#if defined(__GNUC__) || defined(__clang__)
#define SQ_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <xmmintrin.h>
#define SQ_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define SQ_PREFETCH(p) ((void)(p))
#endif

static inline void sq_zero(void *p, size_t n)
{
    volatile unsigned char *d = (volatile unsigned char *)p;
    while (n--)
        *d++ = 0;
}

static inline void sq_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    while (n--)
        *d++ = *s++;
}

static inline int sq_equal(const void *a, const void *b, size_t n)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    unsigned char acc = 0;
    while (n--)
        acc |= (unsigned char)(*x++ ^ *y++);
    return acc == 0;
}

static inline unsigned char sq_fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* ASCII case-insensitive equality: NT paths and service names compare
 * case-insensitively; non-ASCII bytes must match exactly. */
static inline int sq_equal_fold(const void *a, const void *b, size_t n)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (size_t i = 0; i < n; i++)
        if (sq_fold(x[i]) != sq_fold(y[i]))
            return 0;
    return 1;
}

static inline size_t sq_align8(size_t n) { return (n + 7u) & ~(size_t)7u; }

#endif
