#ifndef SQFW_GOLDEN_DEFS_H
#define SQFW_GOLDEN_DEFS_H
#include "blob_builder.h"

/* The golden policies, defined once here and once as JSON in driver/golden
 * (for the C# compiler). Both must produce driver/golden/<name>.bin. */
typedef struct golden_def {
    const char *name;
    const qb_policy *policy;
} golden_def;

extern const golden_def golden_defs[];
extern const unsigned golden_count;

#endif
