/* The boot-time rule set and the check of the request that turns it on or
 * off (see boot_rules.h for why these rules and not others). */
#include "boot_rules.h"
#include "le.h"

#define UDP 17u
#define TCP 6u
#define ICMPV6 58u
#define IS_LOOPBACK 0x00000001u /* FWP_CONDITION_FLAG_IS_LOOPBACK */

#define C(f, m, v) {(uint8_t)(f), (uint8_t)(m), 0, (uint32_t)(v)}
#define EQ(f, v) C(f, SQFW_BM_EQUAL, v)
#define PERMIT(layer, n, ...) {(uint8_t)(layer), 1, SQFW_BOOT_WEIGHT_PERMIT, (uint8_t)(n), {__VA_ARGS__}}
#define BLOCK(layer) {(uint8_t)(layer), 0, SQFW_BOOT_WEIGHT_BLOCK, 0, {{0}}}

/* Kerberos/LDAP to domain controllers, NTP and the rest wait for BFE: a
 * domain logon before BFE is not a thing, and every permit here is open to
 * any process on the host while it lasts. */
static const sqfw_boot_rule rules[SQFW_BOOT_RULE_COUNT] = {
    BLOCK(SQFW_BL_CONNECT_V4),
    BLOCK(SQFW_BL_CONNECT_V6),
    BLOCK(SQFW_BL_ACCEPT_V4),
    BLOCK(SQFW_BL_ACCEPT_V6),
    PERMIT(SQFW_BL_CONNECT_V4, 1, C(SQFW_BF_FLAGS, SQFW_BM_FLAGS_ALL_SET, IS_LOOPBACK)),
    PERMIT(SQFW_BL_CONNECT_V6, 1, C(SQFW_BF_FLAGS, SQFW_BM_FLAGS_ALL_SET, IS_LOOPBACK)),
    PERMIT(SQFW_BL_ACCEPT_V4, 1, C(SQFW_BF_FLAGS, SQFW_BM_FLAGS_ALL_SET, IS_LOOPBACK)),
    PERMIT(SQFW_BL_ACCEPT_V6, 1, C(SQFW_BF_FLAGS, SQFW_BM_FLAGS_ALL_SET, IS_LOOPBACK)),
    /* DHCP: the request to the server port, and the server's answer, whose
     * source address is not the broadcast the request went to */
    PERMIT(SQFW_BL_CONNECT_V4, 3, EQ(SQFW_BF_PROTOCOL, UDP), EQ(SQFW_BF_LOCAL_PORT, 68), EQ(SQFW_BF_REMOTE_PORT, 67)),
    PERMIT(SQFW_BL_ACCEPT_V4, 3, EQ(SQFW_BF_PROTOCOL, UDP), EQ(SQFW_BF_LOCAL_PORT, 68), EQ(SQFW_BF_REMOTE_PORT, 67)),
    PERMIT(SQFW_BL_CONNECT_V6, 3, EQ(SQFW_BF_PROTOCOL, UDP), EQ(SQFW_BF_LOCAL_PORT, 546), EQ(SQFW_BF_REMOTE_PORT, 547)),
    PERMIT(SQFW_BL_ACCEPT_V6, 3, EQ(SQFW_BF_PROTOCOL, UDP), EQ(SQFW_BF_LOCAL_PORT, 546), EQ(SQFW_BF_REMOTE_PORT, 547)),
    /* DNS out, over UDP or TCP (the two protocol conditions are ORed) */
    PERMIT(SQFW_BL_CONNECT_V4, 3, EQ(SQFW_BF_PROTOCOL, UDP), EQ(SQFW_BF_PROTOCOL, TCP), EQ(SQFW_BF_REMOTE_PORT, 53)),
    PERMIT(SQFW_BL_CONNECT_V6, 3, EQ(SQFW_BF_PROTOCOL, UDP), EQ(SQFW_BF_PROTOCOL, TCP), EQ(SQFW_BF_REMOTE_PORT, 53)),
    /* IPv6 does not work without neighbour discovery (router solicitation
     * and advertisement, neighbour solicitation and advertisement), and
     * switches that snoop MLD drop the solicited-node traffic of a host
     * whose MLD reports (v1 131, v2 143) never left it */
    PERMIT(SQFW_BL_CONNECT_V6, 7, EQ(SQFW_BF_PROTOCOL, ICMPV6), EQ(SQFW_BF_LOCAL_PORT, 133), EQ(SQFW_BF_LOCAL_PORT, 134),
           EQ(SQFW_BF_LOCAL_PORT, 135), EQ(SQFW_BF_LOCAL_PORT, 136), EQ(SQFW_BF_LOCAL_PORT, 131),
           EQ(SQFW_BF_LOCAL_PORT, 143)),
    PERMIT(SQFW_BL_ACCEPT_V6, 5, EQ(SQFW_BF_PROTOCOL, ICMPV6), EQ(SQFW_BF_LOCAL_PORT, 133), EQ(SQFW_BF_LOCAL_PORT, 134),
           EQ(SQFW_BF_LOCAL_PORT, 135), EQ(SQFW_BF_LOCAL_PORT, 136)),
};

const sqfw_boot_rule *sqfw_boot_rules(uint32_t *count)
{
    *count = SQFW_BOOT_RULE_COUNT;
    return rules;
}

int sqfw_boot_request_check(const void *buf, size_t len, uint32_t *enable)
{
    /* exactly one layout: a caller that sends more or less is not speaking it */
    if (!buf || len != sizeof(sqfw_boot_filters_in))
        return 0;
    const uint8_t *p = (const uint8_t *)buf;
    uint32_t on = le32(p + 4);
    if (le32(p) != SQFW_BOOT_MAGIC || on > 1u || le32(p + 8) != 0 || le32(p + 12) != 0)
        return 0;
    *enable = on;
    return 1;
}
