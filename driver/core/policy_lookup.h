/* Lookups into a compiled policy, run per packet by the classifier and the
 * authorizer. Kept apart from the compiler so the code on the packet path
 * can be read, measured and reviewed on its own; the compiler uses the same
 * hashes and identity comparison so its tables and these probes agree. */
#ifndef SQFW_POLICY_LOOKUP_H
#define SQFW_POLICY_LOOKUP_H

#include "policy.h"

int sq_find_identity(const sqfw_policy *p, const sq_strtab *t, int kind, const uint8_t *key, uint32_t len);
int sq_class_index(const sqfw_policy *p, uint32_t class_id);
uint64_t sq_entry_hash(uint64_t k0, uint64_t k1, uint64_t k2);
uint64_t sq_string_hash(int kind, const uint8_t *key, uint32_t len);
int sq_ident_matches(const sq_ident *id, int kind, const uint8_t *key, uint32_t len);

#endif
