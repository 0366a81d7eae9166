#include <stdlib.h>
#include <string.h>

#include "test.h"

#define MAX_TESTS 256
static struct {
    const char *name;
    test_fn fn;
} tests[MAX_TESTS];
static int n_tests;
int test_failed_checks;

void test_register(const char *name, test_fn fn)
{
    if (n_tests < MAX_TESTS) {
        tests[n_tests].name = name;
        tests[n_tests].fn = fn;
        n_tests++;
    }
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;
    for (int i = 0; i < n_tests; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1]))
            continue;
        int before = test_failed_checks;
        tests[i].fn();
        if (test_failed_checks == before) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "FAIL %s\n", tests[i].name);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
