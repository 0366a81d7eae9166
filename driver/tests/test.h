/* Minimal test runner: each TEST registers itself; CHECK records a failure
 * and keeps going so one run reports every broken expectation. */
#ifndef SQFW_TEST_H
#define SQFW_TEST_H

#include <stdio.h>

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn);
extern int test_failed_checks;

#define TEST(name)                                                                                                     \
    static void name(void);                                                                                            \
    __attribute__((constructor)) static void reg_##name(void) { test_register(#name, name); }                         \
    static void name(void)

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);                                 \
            test_failed_checks++;                                                                                      \
        }                                                                                                              \
    } while (0)

#define CHECK_EQ(a, b)                                                                                                 \
    do {                                                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                            \
        if (a_ != b_) {                                                                                                \
            fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, a_, #b, b_);         \
            test_failed_checks++;                                                                                      \
        }                                                                                                              \
    } while (0)

#endif
