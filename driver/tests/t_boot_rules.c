/* The boot-time rule set (core/boot_rules.c) and the check of the request
 * that turns it on or off. The expectations are written out here, not read
 * back from the table: a rule dropped, widened or reweighted fails. */
#include <string.h>

#include "../core/boot_rules.h"
#include "test.h"

static int has_cond(const sqfw_boot_rule *r, uint8_t field, uint32_t value)
{
    for (unsigned k = 0; k < r->n_cond; k++)
        if (r->cond[k].field == field && r->cond[k].value == value)
            return 1;
    return 0;
}

/* the one permit at a layer that names exactly these conditions */
static int permit_with(unsigned layer, unsigned n, const sqfw_boot_cond *want)
{
    uint32_t count = 0;
    const sqfw_boot_rule *rules = sqfw_boot_rules(&count);
    int found = 0;
    for (uint32_t i = 0; i < count; i++) {
        const sqfw_boot_rule *r = &rules[i];
        if (r->layer != layer || !r->permit || r->n_cond != n)
            continue;
        unsigned same = 0;
        for (unsigned k = 0; k < n; k++)
            same += has_cond(r, want[k].field, want[k].value) &&
                    r->cond[k].match == (r->cond[k].field == SQFW_BF_FLAGS ? SQFW_BM_FLAGS_ALL_SET : SQFW_BM_EQUAL);
        found += same == n;
    }
    return found;
}

TEST(boot_rules_one_block_per_layer_below_every_permit)
{
    uint32_t n = 0;
    const sqfw_boot_rule *r = sqfw_boot_rules(&n);
    CHECK_EQ(n, 16);
    unsigned blocks[SQFW_BL_COUNT] = {0}, permits[SQFW_BL_COUNT] = {0};
    for (uint32_t i = 0; i < n; i++) {
        CHECK(r[i].layer < SQFW_BL_COUNT);
        CHECK(r[i].n_cond <= SQFW_BOOT_MAX_CONDS);
        CHECK(r[i].weight <= 15); /* FWP_UINT8 weights are 0..15 */
        if (r[i].permit) {
            permits[r[i].layer]++;
            CHECK(r[i].n_cond > 0); /* an unconditional permit would cancel the block */
            CHECK_EQ(r[i].weight, SQFW_BOOT_WEIGHT_PERMIT);
        } else {
            blocks[r[i].layer]++;
            CHECK_EQ(r[i].n_cond, 0);
            CHECK_EQ(r[i].weight, SQFW_BOOT_WEIGHT_BLOCK);
        }
    }
    CHECK(SQFW_BOOT_WEIGHT_PERMIT > SQFW_BOOT_WEIGHT_BLOCK);
    for (unsigned l = 0; l < SQFW_BL_COUNT; l++) {
        CHECK_EQ(blocks[l], 1);
        CHECK(permits[l] >= 2); /* loopback and one service at least */
    }
}

TEST(boot_rules_permit_exactly_the_system_services)
{
    const sqfw_boot_cond loop[] = {{SQFW_BF_FLAGS, SQFW_BM_FLAGS_ALL_SET, 0, 1}};
    for (unsigned l = 0; l < SQFW_BL_COUNT; l++)
        CHECK_EQ(permit_with(l, 1, loop), 1);
    const sqfw_boot_cond dhcp[] = {{SQFW_BF_PROTOCOL, 0, 0, 17}, {SQFW_BF_LOCAL_PORT, 0, 0, 68}, {SQFW_BF_REMOTE_PORT, 0, 0, 67}};
    CHECK_EQ(permit_with(SQFW_BL_CONNECT_V4, 3, dhcp), 1);
    CHECK_EQ(permit_with(SQFW_BL_ACCEPT_V4, 3, dhcp), 1);
    const sqfw_boot_cond dhcp6[] = {{SQFW_BF_PROTOCOL, 0, 0, 17}, {SQFW_BF_LOCAL_PORT, 0, 0, 546}, {SQFW_BF_REMOTE_PORT, 0, 0, 547}};
    CHECK_EQ(permit_with(SQFW_BL_CONNECT_V6, 3, dhcp6), 1);
    CHECK_EQ(permit_with(SQFW_BL_ACCEPT_V6, 3, dhcp6), 1);
    const sqfw_boot_cond dns[] = {{SQFW_BF_PROTOCOL, 0, 0, 17}, {SQFW_BF_PROTOCOL, 0, 0, 6}, {SQFW_BF_REMOTE_PORT, 0, 0, 53}};
    CHECK_EQ(permit_with(SQFW_BL_CONNECT_V4, 3, dns), 1);
    CHECK_EQ(permit_with(SQFW_BL_CONNECT_V6, 3, dns), 1);
    CHECK_EQ(permit_with(SQFW_BL_ACCEPT_V4, 3, dns), 0); /* no DNS server at boot */
    const sqfw_boot_cond nd_out[] = {{SQFW_BF_PROTOCOL, 0, 0, 58}, {SQFW_BF_LOCAL_PORT, 0, 0, 133}, {SQFW_BF_LOCAL_PORT, 0, 0, 134},
                                     {SQFW_BF_LOCAL_PORT, 0, 0, 135}, {SQFW_BF_LOCAL_PORT, 0, 0, 136}, {SQFW_BF_LOCAL_PORT, 0, 0, 131},
                                     {SQFW_BF_LOCAL_PORT, 0, 0, 143}};
    CHECK_EQ(permit_with(SQFW_BL_CONNECT_V6, 7, nd_out), 1);
    CHECK_EQ(permit_with(SQFW_BL_ACCEPT_V6, 5, nd_out), 1);
    /* nothing on IPv4 ICMP, nothing inbound on TCP */
    uint32_t n = 0;
    const sqfw_boot_rule *r = sqfw_boot_rules(&n);
    for (uint32_t i = 0; i < n; i++) {
        CHECK(!has_cond(&r[i], SQFW_BF_PROTOCOL, 1));
        if (r[i].layer == SQFW_BL_ACCEPT_V4 || r[i].layer == SQFW_BL_ACCEPT_V6)
            CHECK(!has_cond(&r[i], SQFW_BF_PROTOCOL, 6));
    }
}

TEST(boot_request_check)
{
    sqfw_boot_filters_in in = {SQFW_BOOT_MAGIC, 1, {0, 0}};
    uint32_t en = 7;
    CHECK(sqfw_boot_request_check(&in, sizeof in, &en) && en == 1);
    in.enable = 0;
    CHECK(sqfw_boot_request_check(&in, sizeof in, &en) && en == 0);
    en = 7;
    in.enable = 2;
    CHECK(!sqfw_boot_request_check(&in, sizeof in, &en) && en == 7);
    in.enable = 1;
    in.magic ^= 1;
    CHECK(!sqfw_boot_request_check(&in, sizeof in, &en));
    in.magic = SQFW_BOOT_MAGIC;
    in.reserved[1] = 1;
    CHECK(!sqfw_boot_request_check(&in, sizeof in, &en));
    in.reserved[1] = 0;
    CHECK(!sqfw_boot_request_check(&in, sizeof in - 1, &en));
    unsigned char longer[sizeof in + 1];
    memcpy(longer, &in, sizeof in);
    longer[sizeof in] = 0;
    CHECK(!sqfw_boot_request_check(longer, sizeof longer, &en));
    CHECK(!sqfw_boot_request_check(NULL, sizeof in, &en));
    CHECK_EQ(en, 7);
}
