/* The optional boot-time filters (core/boot_rules.h says which and why).
 *
 * They live in BFE's store, not in the driver: added through a session that
 * is not dynamic, so closing it (and unloading the driver) leaves them, and
 * WFP enforces them from the next boot until BFE has started, before any
 * callout of ours can run. Only the agent's request removes them. Every
 * object has a fixed key, so the same request twice names the same objects:
 * turning them on deletes each filter by its key and adds it again, which
 * also replaces a filter an older driver stored under that key; turning
 * them off deletes by key and counts "not found" as done. Either change is
 * one transaction: a failure part way aborts it and BFE keeps what it had.
 * The filters only permit or block: a boot-time filter cannot call out to a
 * callout that is not itself a boot-time callout, and ours are not. */
#include "glue.h"
#include "include/wfp_boot_decls.h"

#include "../core/boot_rules.h"
#include "sqfw_keys.h"

/* the keys are shared with the installer, which removes these objects on uninstall */
static const GUID provider_key = SQFW_PROVIDER_KEY;
static const GUID sublayer_key = SQFW_PERSISTENT_SUBLAYER_KEY;
#define FILTER_KEY_BASE 0x10u

/* FWPM_LAYER_ALE_AUTH_* keys (fwpmk.h), in SQFW_BL_* order */
static const GUID layers[SQFW_BL_COUNT] = {
    {0xc38d57d1, 0x05a7, 0x4c33, {0x90, 0x4f, 0x7f, 0xbc, 0xee, 0xe6, 0x0e, 0x82}},
    {0x4a72393b, 0x319f, 0x44bc, {0x84, 0xc3, 0xba, 0x54, 0xdc, 0xb3, 0xb6, 0xb4}},
    {0xe1cd9fe7, 0xf4b5, 0x4273, {0x96, 0xc0, 0x59, 0x2e, 0x48, 0x7b, 0x86, 0x50}},
    {0xa3b42c97, 0x9f04, 0x4672, {0xb8, 0x7e, 0xce, 0xe9, 0xc4, 0x83, 0x25, 0x7f}},
};
static const GUID fields[] = {SQFW_GUID_CONDITION_FLAGS, SQFW_GUID_CONDITION_IP_PROTOCOL,
                              SQFW_GUID_CONDITION_IP_LOCAL_PORT, SQFW_GUID_CONDITION_IP_REMOTE_PORT};

static NTSTATUS except(NTSTATUS st, NTSTATUS fine)
{
    return st == fine ? STATUS_SUCCESS : st;
}

static BOOLEAN fill_condition(const sqfw_boot_cond *c, FWPM_FILTER_CONDITION0 *out)
{
    sq_zero(out, sizeof *out);
    if (c->field >= sizeof fields / sizeof fields[0])
        return FALSE;
    out->fieldKey = fields[c->field];
    out->matchType = c->match == SQFW_BM_FLAGS_ALL_SET ? (FWP_MATCH_TYPE)SQFW_FWP_MATCH_FLAGS_ALL_SET : FWP_MATCH_EQUAL;
    /* each field's documented data type: flags UINT32, protocol UINT8, ports (and ICMP types) UINT16 */
    if (c->field == SQFW_BF_FLAGS) {
        out->conditionValue.type = FWP_UINT32;
        out->conditionValue.uint32 = c->value;
    } else if (c->field == SQFW_BF_PROTOCOL) {
        out->conditionValue.type = FWP_UINT8;
        out->conditionValue.uint8 = (UINT8)c->value;
    } else {
        out->conditionValue.type = FWP_UINT16;
        out->conditionValue.uint16 = (UINT16)c->value;
    }
    return c->value <= (c->field == SQFW_BF_FLAGS ? 0xFFFFFFFFu : c->field == SQFW_BF_PROTOCOL ? 0xFFu : 0xFFFFu);
}

static NTSTATUS add_rule(HANDLE e, UINT32 i, const sqfw_boot_rule *r)
{
    FWPM_FILTER_CONDITION0 conds[SQFW_BOOT_MAX_CONDS];
    if (r->layer >= SQFW_BL_COUNT || r->n_cond > SQFW_BOOT_MAX_CONDS)
        return STATUS_INVALID_PARAMETER;
    for (UINT32 k = 0; k < r->n_cond; k++)
        if (!fill_condition(&r->cond[k], &conds[k]))
            return STATUS_INVALID_PARAMETER;
    GUID key = (GUID)SQFW_PERSISTED_KEY((UCHAR)(FILTER_KEY_BASE + i));
    GUID provider = provider_key;
    FWPM_FILTER0 f;
    sq_zero(&f, sizeof f);
    f.filterKey = key;
    f.displayData.name = r->permit ? L"SieveQ boot-time permit" : L"SieveQ boot-time block";
    f.flags = FWPM_FILTER_FLAG_BOOTTIME; /* not PERSISTENT: WFP refuses the two together */
    f.providerKey = &provider;
    f.layerKey = layers[r->layer];
    f.subLayerKey = sublayer_key;
    f.weight.type = FWP_UINT8;
    f.weight.uint8 = r->weight;
    f.numFilterConditions = r->n_cond;
    f.filterCondition = r->n_cond ? conds : NULL;
    f.action.type = r->permit ? FWP_ACTION_PERMIT : FWP_ACTION_BLOCK;
    NTSTATUS st = except(FwpmFilterDeleteByKey0(e, &key), STATUS_FWP_FILTER_NOT_FOUND);
    return NT_SUCCESS(st) ? FwpmFilterAdd0(e, &f, NULL, NULL) : st;
}

static NTSTATUS add_all(HANDLE e)
{
    FWPM_PROVIDER0 p;
    sq_zero(&p, sizeof p);
    p.providerKey = provider_key;
    p.displayData.name = L"SieveQ";
    p.flags = FWPM_PROVIDER_FLAG_PERSISTENT;
    NTSTATUS st = except(FwpmProviderAdd0(e, &p, NULL), STATUS_FWP_ALREADY_EXISTS);
    GUID provider = provider_key;
    FWPM_SUBLAYER0 s;
    sq_zero(&s, sizeof s);
    s.subLayerKey = sublayer_key;
    s.displayData.name = L"SieveQ boot-time filters";
    s.flags = FWPM_SUBLAYER_FLAG_PERSISTENT;
    s.providerKey = &provider;
    s.weight = 0x8000;
    if (NT_SUCCESS(st))
        st = except(FwpmSubLayerAdd0(e, &s, NULL), STATUS_FWP_ALREADY_EXISTS);
    UINT32 n = 0;
    const sqfw_boot_rule *r = sqfw_boot_rules(&n);
    for (UINT32 i = 0; i < n && NT_SUCCESS(st); i++)
        st = add_rule(e, i, &r[i]);
    return st;
}

static NTSTATUS remove_all(HANDLE e)
{
    UINT32 n = 0;
    NTSTATUS st = STATUS_SUCCESS;
    sqfw_boot_rules(&n);
    for (UINT32 i = 0; i < n && NT_SUCCESS(st); i++) {
        GUID key = (GUID)SQFW_PERSISTED_KEY((UCHAR)(FILTER_KEY_BASE + i));
        st = except(FwpmFilterDeleteByKey0(e, &key), STATUS_FWP_FILTER_NOT_FOUND);
    }
    if (NT_SUCCESS(st))
        st = except(FwpmSubLayerDeleteByKey0(e, &sublayer_key), STATUS_FWP_SUBLAYER_NOT_FOUND);
    if (NT_SUCCESS(st))
        st = except(FwpmProviderDeleteByKey0(e, &provider_key), STATUS_FWP_PROVIDER_NOT_FOUND);
    return st;
}

/* PASSIVE_LEVEL. Without BFE there is no store to change: the caller is told
 * so (STATUS_DEVICE_NOT_READY) rather than the request being kept for later,
 * so the agent knows the state it asked for is not in place and retries. */
NTSTATUS sqfw_boot_filters_set(UINT32 enable, sqfw_boot_filters_out *out)
{
    UINT32 n = 0;
    sqfw_boot_rules(&n);
    sq_zero(out, sizeof *out);
    out->enabled = enable;
    out->filters = SQFW_BOOT_UNCHANGED;
    sqfw_session_lock();
    NTSTATUS st = FwpmBfeStateGet0() == FWPM_SERVICE_RUNNING ? STATUS_SUCCESS : STATUS_DEVICE_NOT_READY;
    HANDLE e = NULL;
    FWPM_SESSION0 session;
    sq_zero(&session, sizeof session); /* not dynamic: what it adds outlives it */
    if (NT_SUCCESS(st))
        st = FwpmEngineOpen0(NULL, RPC_C_AUTHN_DEFAULT, NULL, &session, &e);
    if (NT_SUCCESS(st)) {
        st = FwpmTransactionBegin0(e, 0);
        if (NT_SUCCESS(st)) {
            st = enable ? add_all(e) : remove_all(e);
            if (NT_SUCCESS(st))
                st = FwpmTransactionCommit0(e);
            else
                FwpmTransactionAbort0(e);
        }
        FwpmEngineClose0(e);
    }
    sqfw_session_unlock();
    if (NT_SUCCESS(st))
        out->filters = enable ? n : 0;
    out->status = (uint32_t)st;
    return st;
}
