/* Test-only: what the fwpkclnt.sys stand-in keeps of BFE's store of
 * persistent and boot-time objects (wine/standin_boot.c), as the harness
 * reads it (wine/harness_boot.c) through IOCTL_STANDIN_BOOT. */
#ifndef SQFW_STANDIN_BOOT_IOCTL_H
#define SQFW_STANDIN_BOOT_IOCTL_H
#include <stdint.h>

#include "standin_ioctl.h"

#define IOCTL_STANDIN_BOOT SQ_STANDIN_CTL(0xF04u) /* in: sq_boot_ctl; out: sq_boot_state (op GET) */
enum { SQ_BOOT_GET = 0, SQ_BOOT_FAIL_FILTER_ADD = 1 /* the arg-th FwpmFilterAdd0 from now on fails, once */ };
typedef struct sq_boot_ctl {
    uint32_t op, arg;
} sq_boot_ctl;

#define SQ_BOOT_MAX_FILTERS 40
#define SQ_BOOT_MAX_CONDS 8
typedef struct sq_boot_cond {
    uint8_t field[16];
    uint32_t match, type, value;
} sq_boot_cond;

typedef struct sq_boot_filter {
    uint8_t key[16], layer[16], sublayer[16], provider[16];
    uint32_t has_provider, flags, action, weight_type;
    uint64_t weight, id;
    uint32_t n_cond, reserved;
    sq_boot_cond cond[SQ_BOOT_MAX_CONDS];
} sq_boot_filter;

typedef struct sq_boot_store {
    uint32_t magic, has_provider, provider_flags, has_sublayer;
    uint8_t provider_key[16], sublayer_key[16], sublayer_provider[16];
    uint32_t sublayer_flags, sublayer_weight, sublayer_has_provider, n_filters;
    sq_boot_filter f[SQ_BOOT_MAX_FILTERS];
} sq_boot_store;

typedef struct sq_boot_state {
    uint64_t sessions_opened, sessions_closed;
    uint64_t txn_begun, txn_committed, txn_aborted;
    uint64_t changes_outside_txn; /* objects added or deleted with no transaction open */
    uint64_t filter_adds, injected_failures, refused; /* refused: what WFP would refuse (flags, keys, references) */
    uint64_t attaches;            /* stand-in loads since the prefix was made (kept in the store file) */
    uint64_t loaded_filters;      /* filters this load read back from the store file */
    sq_boot_store store;          /* what BFE holds now (committed) */
} sq_boot_state;

#endif
