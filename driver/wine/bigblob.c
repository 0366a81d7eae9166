/* TEST ONLY: writes the policy that revokes the DNS client service (the
 * golden workstation without its Dnscache identity, rule and DNS setting),
 * and the two large policies the Wine harness pushes to check
 * the driver's caps: 100 000 rules (a 4.1 MB blob, a 10.5 MB arena: both
 * under the caps, accepted) and 175 000 rules (a 7.1 MB blob under the blob
 * cap whose arena passes the 16 MiB arena cap: refused before allocating).
 *   bigblob DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/policy_format.h"
#include "../core/sqfw.h"
#include "../tests/blob_builder.h"
#include "../tests/golden_defs.h"
#include "../wfp/sqfw_ioctl.h"

static int write_policy(const char *dir, const char *name, uint32_t nrules, int want_over_arena)
{
    enum { NID = 1000 };
    static char names[NID][48];
    static qb_ident ids[NID];
    for (uint32_t i = 0; i < NID; i++) {
        snprintf(names[i], sizeof names[i], "\\device\\harddiskvolume2\\bulk\\app%u.exe", i);
        ids[i] = (qb_ident){.id = i + 1, .kind = SQFW_KIND_IMAGE_PATH, .name = names[i]};
    }
    qb_rule *rules = calloc(nrules, sizeof *rules);
    if (!rules)
        return 1;
    for (uint32_t i = 0; i < nrules; i++) {
        qb_rule *r = &rules[i];
        uint32_t a = 0x0A000000u | i;
        *r = (qb_rule){.id = i + 1, .identity = 1 + i % NID, .family = 4, .prefix = 32, .proto = 6,
                       .dir = SQFW_DIR_OUT, .port_lo = (uint16_t)(1 + i % 60000), .class_id = SQFW_CLASS_INHERIT};
        r->port_hi = r->port_lo;
        r->addr[0] = (uint8_t)(a >> 24), r->addr[1] = (uint8_t)(a >> 16), r->addr[2] = (uint8_t)(a >> 8);
        r->addr[3] = (uint8_t)a;
    }
    qb_class cls = {.id = 0, .weight = 1};
    qb_level lvl = {.admit = 1};
    qb_policy p = {.serial = 7000 + (nrules / 1000), .max_pended = 1, .pend_timeout_ms = 1,
                   .loopback = SQFW_LOOPBACK_ENFORCE, .ids = ids, .n_ids = NID, .rules = rules, .n_rules = nrules,
                   .classes = &cls, .n_classes = 1, .levels = &lvl, .n_levels = 1};
    size_t len = 0, need = 0;
    uint32_t off = 0;
    uint8_t *b = qb_build_alloc(&p, &len);
    free(rules);
    if (!b || sqfw_policy_arena_size(b, len, &need, &off) != SQFW_OK || len > SQFW_DRIVER_MAX_POLICY ||
        (need > SQFW_DRIVER_MAX_ARENA) != want_over_arena) {
        fprintf(stderr, "bigblob: %s does not have the shape the check needs (blob %zu, arena %zu)\n", name, len, need);
        return 1;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(b, 1, len, f) != len;
    if (f)
        bad |= fclose(f) != 0;
    free(b);
    return bad;
}

static int write_revoke(const char *dir)
{
    const qb_policy *ws = golden_defs[1].policy;
    static qb_ident ids[16];
    static qb_rule rules[16];
    qb_policy p = *ws;
    p.serial = 43;
    p.dns = SQFW_DNS_BY_RULES;
    p.n_ids = p.n_rules = 0;
    for (uint32_t i = 0; i < ws->n_ids && p.n_ids < 16; i++)
        if (ws->ids[i].kind != SQFW_KIND_SERVICE || strcmp(ws->ids[i].name, "Dnscache") != 0)
            ids[p.n_ids++] = ws->ids[i];
    for (uint32_t i = 0; i < ws->n_rules && p.n_rules < 16; i++)
        if (ws->rules[i].identity != 3)
            rules[p.n_rules++] = ws->rules[i];
    p.ids = ids;
    p.rules = rules;
    size_t len = 0;
    uint8_t *b = qb_build_alloc(&p, &len);
    char path[512];
    snprintf(path, sizeof path, "%s/revoke-dns.bin", dir);
    FILE *f = b ? fopen(path, "wb") : NULL;
    int bad = !f || fwrite(b, 1, len, f) != len || p.n_ids + 1 != ws->n_ids;
    if (f)
        bad |= fclose(f) != 0;
    free(b);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    return write_revoke(argv[1]) | write_policy(argv[1], "big-100k.bin", 100000, 0) |
           write_policy(argv[1], "big-175k.bin", 175000, 1);
}
