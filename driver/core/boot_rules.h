/* The optional boot-time filters: what they are, as data.
 *
 * Until BFE has started, WFP enforces only boot-time filters (flag
 * FWPM_FILTER_FLAG_BOOTTIME), and those cannot call out to a driver that is
 * not a boot-time callout, so the driver's own decisions start later. When
 * the agent asks for them, the driver stores this fixed set in BFE: a block
 * at each ALE connect/accept layer and, at a higher weight in the same
 * sublayer, permits for what the system itself needs before any agent runs
 * (loopback, DHCP and DHCPv6, DNS, ICMPv6 neighbour discovery and the MLD
 * reports it relies on). The WFP glue (wfp/bootfilters.c) turns each rule
 * into an FWPM_FILTER0; this file stays free of Windows types so the set and
 * the request check are unit-tested on Linux. */
#ifndef SQFW_BOOT_RULES_H
#define SQFW_BOOT_RULES_H

#include "sqfw_base.h"

enum { SQFW_BL_CONNECT_V4, SQFW_BL_CONNECT_V6, SQFW_BL_ACCEPT_V4, SQFW_BL_ACCEPT_V6, SQFW_BL_COUNT };

/* condition fields; at the ALE layers an ICMP type is carried in the local
 * port field (FWPM_CONDITION_ICMP_TYPE is FWPM_CONDITION_IP_LOCAL_PORT) */
enum { SQFW_BF_FLAGS, SQFW_BF_PROTOCOL, SQFW_BF_LOCAL_PORT, SQFW_BF_REMOTE_PORT };
enum { SQFW_BM_EQUAL, SQFW_BM_FLAGS_ALL_SET };

/* WFP filter weights of type FWP_UINT8 are 0..15 (the high nibble of the
 * 64-bit weight); inside one sublayer the heaviest matching filter decides */
#define SQFW_BOOT_WEIGHT_PERMIT 15u
#define SQFW_BOOT_WEIGHT_BLOCK 0u

#define SQFW_BOOT_MAX_CONDS 8u
#define SQFW_BOOT_RULE_COUNT 16u

typedef struct sqfw_boot_cond {
    uint8_t field; /* SQFW_BF_* */
    uint8_t match; /* SQFW_BM_* */
    uint16_t reserved;
    uint32_t value; /* protocol: 8 bits, ports and ICMP types: 16, flags: 32 */
} sqfw_boot_cond;

typedef struct sqfw_boot_rule {
    uint8_t layer;  /* SQFW_BL_* */
    uint8_t permit; /* 1: FWP_ACTION_PERMIT, 0: FWP_ACTION_BLOCK */
    uint8_t weight;
    uint8_t n_cond; /* conditions on one field are ORed by WFP, on different fields ANDed */
    sqfw_boot_cond cond[SQFW_BOOT_MAX_CONDS];
} sqfw_boot_rule;

/* The rules, in a fixed order: rule i is stored under filter key i (the
 * glue's GUIDs), so adding them again names the same objects. */
SQFW_API const sqfw_boot_rule *sqfw_boot_rules(uint32_t *count);

/* IOCTL_SQFW_SET_BOOT_FILTERS's input, checked whole: exactly this size, the
 * magic, enable 0 or 1, reserved 0. */
#define SQFW_BOOT_MAGIC 0x544F4F42u /* "BOOT" little-endian */
typedef struct sqfw_boot_filters_in {
    uint32_t magic;
    uint32_t enable;
    uint32_t reserved[2];
} sqfw_boot_filters_in;

/* 1 and *enable set when the request is well formed, else 0. */
SQFW_API int sqfw_boot_request_check(const void *buf, size_t len, uint32_t *enable);

#endif
