/* Whole-blob validation. Nothing reads a record before sqfw_parse() has
 * accepted every byte of the blob, so the compiler may trust the view. */
#ifndef SQFW_POLICY_PARSE_H
#define SQFW_POLICY_PARSE_H

#include "sqfw.h"
#include "policy_format.h"

typedef struct sqfw_section_view {
    const uint8_t *p; /* NULL when the section is absent */
    uint32_t offset;
    uint32_t length;
    uint32_t count;
} sqfw_section_view;

typedef struct sqfw_blob_view {
    const uint8_t *blob;
    uint32_t length;
    uint64_t serial;
    sqfw_section_view s[SQFW_SECT_MAX_TYPE + 1]; /* indexed by section type */
} sqfw_blob_view;

int sqfw_parse(const uint8_t *blob, size_t len, sqfw_blob_view *v, uint32_t *err_offset);

#endif
