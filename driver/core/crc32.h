#ifndef SQFW_CRC32_H
#define SQFW_CRC32_H
#include "sqfw_base.h"

/* CRC-32/ISO-HDLC (the zlib one). crc starts at 0 and chains across calls. */
SQFW_API uint32_t sqfw_crc32(uint32_t crc, const uint8_t *p, size_t n);

#endif
