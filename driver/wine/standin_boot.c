/* TEST ONLY, never shipped: BFE's store of persistent and boot-time objects,
 * as far as the driver's boot-time filters need it.
 *
 * Objects added through a session that is not dynamic land here: a
 * provider, a sublayer, filters. Transactions stage every change on a copy
 * that a commit makes current and an abort drops, and a session closed with
 * one open aborts it, as BFE does. What WFP refuses is refused (and counted):
 * BOOTTIME with PERSISTENT, a boot-time filter that calls out, a persistent
 * or boot-time filter in a dynamic session, a key already there, a provider
 * or sublayer that does not exist, deleting one that is still referenced.
 * The stand-in is loaded afresh with every load of the driver, so the
 * committed store goes to a file in the prefix (C:\sqfw-bfe-store.bin) and is
 * read back on the next load, keeping only what was flagged to outlive BFE
 * (the persistent provider and sublayer, persistent and boot-time filters):
 * a driver unload and load stands for BFE coming back with its store. */
#include "standin_boot.h"
#include "standin_boot_ioctl.h"

__declspec(dllimport) void *__stdcall CreateFileA(const char *name, ULONG access, ULONG share, void *sa, ULONG disp,
                                                  ULONG flags, void *tmpl);
__declspec(dllimport) int __stdcall WriteFile(void *h, const void *buf, ULONG n, ULONG *written, void *ov);
__declspec(dllimport) int __stdcall ReadFile(void *h, void *buf, ULONG n, ULONG *got, void *ov);
__declspec(dllimport) int __stdcall CloseHandle(void *h);

#define STORE_PATH "C:\\sqfw-bfe-store.bin"
#define STORE_MAGIC 0x53454642u
#define SESSION_BASE 0x6100u
#define MAX_SESSIONS 8u

static sq_boot_state st8;   /* counters and the committed store */
static sq_boot_store stage; /* the open transaction's copy */
static HANDLE txn_owner;    /* the session whose transaction is open, or NULL */
static UINT32 live_sessions; /* bit per open session */
static UINT32 fail_at;       /* fail the fail_at-th filter add from arming, once; 0: never */

static int guid_eq(const void *a, const GUID *b)
{
    return RtlCompareMemory(a, b, sizeof *b) == sizeof *b;
}

int sq_boot_owns(HANDLE h)
{
    ULONG_PTR v = (ULONG_PTR)h;
    return v >= SESSION_BASE && v < SESSION_BASE + MAX_SESSIONS && (live_sessions & (1u << (v - SESSION_BASE)));
}

static void save(void)
{
    void *f = CreateFileA(STORE_PATH, 0x40000000 /* GENERIC_WRITE */, 0, NULL, 2 /* CREATE_ALWAYS */, 0x80, NULL);
    if (f == (void *)(LONG_PTR)-1)
        return;
    ULONG w = 0;
    WriteFile(f, &st8.attaches, sizeof st8.attaches, &w, NULL);
    WriteFile(f, &st8.store, sizeof st8.store, &w, NULL);
    CloseHandle(f);
}

/* BFE starting with its store: what was not flagged to outlive it is gone */
void sq_boot_attach(void)
{
    RtlZeroMemory(&st8, sizeof st8);
    txn_owner = NULL;
    live_sessions = 0;
    fail_at = 0;
    void *f = CreateFileA(STORE_PATH, 0x80000000 /* GENERIC_READ */, 1, NULL, 3 /* OPEN_EXISTING */, 0x80, NULL);
    if (f != (void *)(LONG_PTR)-1) {
        ULONG got1 = 0, got2 = 0;
        UINT64 attaches = 0;
        ReadFile(f, &attaches, sizeof attaches, &got1, NULL);
        ReadFile(f, &st8.store, sizeof st8.store, &got2, NULL);
        CloseHandle(f);
        if (got1 != sizeof attaches || got2 != sizeof st8.store || st8.store.magic != STORE_MAGIC ||
            st8.store.n_filters > SQ_BOOT_MAX_FILTERS)
            RtlZeroMemory(&st8.store, sizeof st8.store);
        else
            st8.attaches = attaches;
    }
    sq_boot_store *s = &st8.store;
    s->magic = STORE_MAGIC;
    s->has_provider = s->has_provider && (s->provider_flags & FWPM_PROVIDER_FLAG_PERSISTENT);
    s->has_sublayer = s->has_sublayer && (s->sublayer_flags & FWPM_SUBLAYER_FLAG_PERSISTENT);
    UINT32 kept = 0;
    for (UINT32 i = 0; i < s->n_filters; i++)
        if (s->f[i].flags & (FWPM_FILTER_FLAG_PERSISTENT | FWPM_FILTER_FLAG_BOOTTIME))
            s->f[kept++] = s->f[i];
    s->n_filters = kept;
    st8.loaded_filters = kept;
    st8.attaches++;
    save();
}

static sq_boot_store *cur(HANDLE h)
{
    return txn_owner == h ? &stage : &st8.store;
}

static void changed(HANDLE h)
{
    if (txn_owner == h)
        return;
    st8.changes_outside_txn++;
    save();
}

NTSTATUS sq_boot_engine_open(HANDLE *h)
{
    if (FwpmBfeStateGet0() != FWPM_SERVICE_RUNNING)
        return (NTSTATUS)0xC0020017; /* RPC_NT_SERVER_UNAVAILABLE: no BFE to talk to */
    for (UINT32 i = 0; i < MAX_SESSIONS; i++)
        if (!(live_sessions & (1u << i))) {
            live_sessions |= 1u << i;
            *h = (HANDLE)(ULONG_PTR)(SESSION_BASE + i);
            st8.sessions_opened++;
            return STATUS_SUCCESS;
        }
    return STATUS_INSUFFICIENT_RESOURCES;
}

NTSTATUS sq_boot_engine_close(HANDLE h)
{
    if (txn_owner == h) { /* BFE aborts what a closing session left open */
        txn_owner = NULL;
        st8.txn_aborted++;
    }
    live_sessions &= ~(1u << ((ULONG_PTR)h - SESSION_BASE));
    st8.sessions_closed++;
    return STATUS_SUCCESS;
}

NTSTATUS sq_boot_txn(HANDLE h, int op)
{
    if (op == SQ_TXN_BEGIN) {
        if (txn_owner)
            return STATUS_FWP_TXN_IN_PROGRESS;
        stage = st8.store;
        txn_owner = h;
        st8.txn_begun++;
        return STATUS_SUCCESS;
    }
    if (txn_owner != h)
        return STATUS_FWP_NO_TXN_IN_PROGRESS;
    txn_owner = NULL;
    if (op == SQ_TXN_COMMIT) {
        st8.store = stage;
        st8.txn_committed++;
        save();
    } else {
        st8.txn_aborted++;
    }
    return STATUS_SUCCESS;
}

static NTSTATUS refuse(NTSTATUS st)
{
    st8.refused++;
    return st;
}

NTSTATUS NTAPI FwpmProviderAdd0(HANDLE h, const FWPM_PROVIDER0 *p, PSECURITY_DESCRIPTOR sd)
{
    (void)sd;
    if (!sq_boot_owns(h) || !p)
        return refuse(STATUS_INVALID_PARAMETER);
    sq_boot_store *s = cur(h);
    if (s->has_provider)
        return STATUS_FWP_ALREADY_EXISTS; /* one provider is all the driver has: any second is its own */
    s->has_provider = 1;
    RtlCopyMemory(s->provider_key, &p->providerKey, 16);
    s->provider_flags = p->flags;
    changed(h);
    return STATUS_SUCCESS;
}

NTSTATUS sq_boot_sublayer_add(HANDLE h, const FWPM_SUBLAYER0 *sl)
{
    sq_boot_store *s = cur(h);
    if (s->has_sublayer)
        return STATUS_FWP_ALREADY_EXISTS;
    if (sl->providerKey && !(s->has_provider && guid_eq(s->provider_key, sl->providerKey)))
        return refuse(STATUS_FWP_PROVIDER_NOT_FOUND);
    s->has_sublayer = 1;
    RtlCopyMemory(s->sublayer_key, &sl->subLayerKey, 16);
    s->sublayer_has_provider = sl->providerKey != NULL;
    if (sl->providerKey)
        RtlCopyMemory(s->sublayer_provider, sl->providerKey, 16);
    s->sublayer_flags = sl->flags;
    s->sublayer_weight = sl->weight;
    changed(h);
    return STATUS_SUCCESS;
}

static int find_filter(const sq_boot_store *s, const GUID *key)
{
    for (UINT32 i = 0; i < s->n_filters; i++)
        if (guid_eq(s->f[i].key, key))
            return (int)i;
    return -1;
}

NTSTATUS sq_boot_filter_add(HANDLE h, const FWPM_FILTER0 *f, UINT64 *id)
{
    if (!sq_boot_owns(h))
        return refuse(STATUS_FWP_DYNAMIC_SESSION_IN_PROGRESS); /* nothing outlives a dynamic session */
    st8.filter_adds++;
    if (fail_at && --fail_at == 0) {
        st8.injected_failures++;
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    const UINT32 both = FWPM_FILTER_FLAG_PERSISTENT | FWPM_FILTER_FLAG_BOOTTIME;
    if ((f->flags & both) == both)
        return refuse(STATUS_FWP_INVALID_FLAGS);
    if ((f->flags & FWPM_FILTER_FLAG_BOOTTIME) && (f->action.type & FWP_ACTION_FLAG_CALLOUT))
        return refuse(STATUS_FWP_CALLOUT_NOT_FOUND); /* only boot-time callouts exist before BFE */
    if (f->numFilterConditions > SQ_BOOT_MAX_CONDS || (f->numFilterConditions && !f->filterCondition))
        return refuse(STATUS_INVALID_PARAMETER);
    if (f->weight.type != FWP_EMPTY && f->weight.type != FWP_UINT64 &&
        !(f->weight.type == FWP_UINT8 && f->weight.uint8 <= 15))
        return refuse(STATUS_FWP_INVALID_WEIGHT);
    sq_boot_store *s = cur(h);
    if (find_filter(s, &f->filterKey) >= 0)
        return refuse(STATUS_FWP_ALREADY_EXISTS);
    if (f->providerKey && !(s->has_provider && guid_eq(s->provider_key, f->providerKey)))
        return refuse(STATUS_FWP_PROVIDER_NOT_FOUND);
    if (!(s->has_sublayer && guid_eq(s->sublayer_key, &f->subLayerKey)))
        return refuse(STATUS_FWP_SUBLAYER_NOT_FOUND);
    if (s->n_filters >= SQ_BOOT_MAX_FILTERS)
        return refuse(STATUS_INSUFFICIENT_RESOURCES);
    sq_boot_filter *r = &s->f[s->n_filters];
    RtlZeroMemory(r, sizeof *r);
    RtlCopyMemory(r->key, &f->filterKey, 16);
    RtlCopyMemory(r->layer, &f->layerKey, 16);
    RtlCopyMemory(r->sublayer, &f->subLayerKey, 16);
    r->has_provider = f->providerKey != NULL;
    if (f->providerKey)
        RtlCopyMemory(r->provider, f->providerKey, 16);
    r->flags = f->flags;
    r->action = f->action.type;
    r->weight_type = f->weight.type;
    r->weight = f->weight.type == FWP_UINT8 ? f->weight.uint8 : f->weight.type == FWP_UINT64 ? *f->weight.uint64 : 0;
    r->n_cond = f->numFilterConditions;
    for (UINT32 k = 0; k < r->n_cond; k++) {
        const FWPM_FILTER_CONDITION0 *c = &f->filterCondition[k];
        RtlCopyMemory(r->cond[k].field, &c->fieldKey, 16);
        r->cond[k].match = c->matchType;
        r->cond[k].type = c->conditionValue.type;
        r->cond[k].value = c->conditionValue.type == FWP_UINT8    ? c->conditionValue.uint8
                           : c->conditionValue.type == FWP_UINT16 ? c->conditionValue.uint16
                           : c->conditionValue.type == FWP_UINT32 ? c->conditionValue.uint32
                                                                  : 0xFFFFFFFFu;
    }
    static UINT64 next_id = 0x9000;
    r->id = next_id++;
    if (id)
        *id = r->id;
    s->n_filters++;
    changed(h);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI FwpmFilterDeleteByKey0(HANDLE h, const GUID *key)
{
    if (!sq_boot_owns(h) || !key)
        return refuse(STATUS_INVALID_PARAMETER);
    sq_boot_store *s = cur(h);
    int i = find_filter(s, key);
    if (i < 0)
        return STATUS_FWP_FILTER_NOT_FOUND;
    for (UINT32 k = (UINT32)i; k + 1 < s->n_filters; k++)
        s->f[k] = s->f[k + 1];
    s->n_filters--;
    changed(h);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI FwpmSubLayerDeleteByKey0(HANDLE h, const GUID *key)
{
    if (!sq_boot_owns(h) || !key)
        return refuse(STATUS_INVALID_PARAMETER);
    sq_boot_store *s = cur(h);
    if (!s->has_sublayer || !guid_eq(s->sublayer_key, key))
        return STATUS_FWP_SUBLAYER_NOT_FOUND;
    for (UINT32 i = 0; i < s->n_filters; i++)
        if (guid_eq(s->f[i].sublayer, key))
            return refuse(STATUS_FWP_IN_USE);
    s->has_sublayer = 0;
    changed(h);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI FwpmProviderDeleteByKey0(HANDLE h, const GUID *key)
{
    if (!sq_boot_owns(h) || !key)
        return refuse(STATUS_INVALID_PARAMETER);
    sq_boot_store *s = cur(h);
    if (!s->has_provider || !guid_eq(s->provider_key, key))
        return STATUS_FWP_PROVIDER_NOT_FOUND;
    int used = s->has_sublayer && s->sublayer_has_provider && guid_eq(s->sublayer_provider, key);
    for (UINT32 i = 0; i < s->n_filters; i++)
        used |= s->f[i].has_provider && guid_eq(s->f[i].provider, key);
    if (used)
        return refuse(STATUS_FWP_IN_USE);
    s->has_provider = 0;
    changed(h);
    return STATUS_SUCCESS;
}

int sq_boot_ioctl(ULONG code, void *buf, ULONG in_len, ULONG out_len, NTSTATUS *st, ULONG *info)
{
    if (code != IOCTL_STANDIN_BOOT)
        return 0;
    sq_boot_ctl c;
    *info = 0;
    if (in_len < sizeof c) {
        *st = STATUS_INVALID_PARAMETER;
        return 1;
    }
    RtlCopyMemory(&c, buf, sizeof c);
    if (c.op == SQ_BOOT_FAIL_FILTER_ADD) {
        fail_at = c.arg;
        *st = STATUS_SUCCESS;
    } else if (c.op == SQ_BOOT_GET && out_len >= sizeof st8) {
        RtlCopyMemory(buf, &st8, sizeof st8);
        *info = sizeof st8;
        *st = STATUS_SUCCESS;
    } else {
        *st = STATUS_INVALID_PARAMETER;
    }
    return 1;
}
