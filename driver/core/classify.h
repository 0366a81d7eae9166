/* Pure classification: which identity a request belongs to and which allow
 * rule covers it. No state changes, so explain and authorize share it. */
#ifndef SQFW_CLASSIFY_H
#define SQFW_CLASSIFY_H

#include "policy_lookup.h"

typedef struct sq_match {
    uint32_t reason;    /* sqfw_reason */
    int32_t ident_idx;  /* -1 when none */
    int32_t rule_idx;   /* -1 when none */
    uint32_t class_idx;
} sq_match;

/* Facts the engine looked up before classifying. */
typedef struct sq_facts {
    const uint8_t *service; /* request's or the bound one */
    uint32_t service_len;
    const uint8_t *sha256;  /* attested image hash, NULL when not yet known */
} sq_facts;

/* Fills m. m->reason is SQFW_R_RULE when an allow rule matched, otherwise
 * the reason the whitelist denies (or pends, or lets loopback/DNS through). */
void sq_classify(const sqfw_policy *p, const sqfw_request *r, const sq_facts *f, sq_match *m);

/* Longest-prefix, then protocol-specific, then lowest-rule-id lookup. */
int32_t sq_lookup_rule(const sqfw_policy *p, uint32_t ident_idx, uint8_t family, uint8_t proto, uint8_t dir,
                       const uint8_t *addr, uint16_t port);

#endif
