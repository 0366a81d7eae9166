#include <stdio.h>

#include "fixture.h"
#include "golden_defs.h"
#include "test.h"

#ifndef GOLDEN_DIR
#define GOLDEN_DIR "golden"
#endif

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

TEST(golden_files_equal_the_canonical_writer)
{
    for (unsigned i = 0; i < golden_count; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.bin", GOLDEN_DIR, golden_defs[i].name);
        size_t flen = 0, blen = 0;
        uint8_t *file = read_file(path, &flen);
        CHECK(file != NULL);
        if (!file)
            continue;
        uint8_t *built = qb_build_alloc(golden_defs[i].policy, &blen);
        CHECK_EQ(flen, blen);
        CHECK(flen == blen && memcmp(file, built, flen) == 0);
        uint32_t off;
        CHECK_EQ(sqfw_policy_check(file, flen, &off), SQFW_OK);
        free(built);
        free(file);
    }
}
