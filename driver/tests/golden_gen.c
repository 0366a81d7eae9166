/* Writes driver/golden/<name>.bin from golden_defs.c (make golden). */
#include <stdio.h>
#include <stdlib.h>

#include "golden_defs.h"

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "golden";
    for (unsigned i = 0; i < golden_count; i++) {
        size_t len;
        uint8_t *b = qb_build_alloc(golden_defs[i].policy, &len);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.bin", dir, golden_defs[i].name);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b, 1, len, f) != len) {
            perror(path);
            return 1;
        }
        fclose(f);
        printf("%s: %zu bytes\n", path, len);
        free(b);
    }
    return 0;
}
