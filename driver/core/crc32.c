#include "crc32.h"

/* Bitwise, table-free: the CRC runs once per policy push, never per packet,
 * and a table would be one more thing to keep in non-paged memory. */
uint32_t sqfw_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}
