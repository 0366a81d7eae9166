/* The ETW provider "SieveQ-Firewall" (TraceLogging, self-describing): the
 * connection log for an operator's trace session, next to the agent's event
 * ring. The encoding is the core's (core/trace_meta.c); this file registers
 * the provider and writes what the engine's event tap hands it.
 *
 * The Etw* routines are resolved at load with MmGetSystemRoutineAddress, not
 * imported: an import the loader cannot bind fails the whole driver, and a
 * firewall must not stop filtering because tracing is unavailable. When
 * they are absent the driver runs without ETW (etw_state says so). */
#include "glue.h"

#include "../core/trace_meta.h"

typedef NTSTATUS(NTAPI *etw_register_fn)(LPCGUID, PETWENABLECALLBACK, PVOID, PREGHANDLE);
typedef NTSTATUS(NTAPI *etw_unregister_fn)(REGHANDLE);
typedef NTSTATUS(NTAPI *etw_set_information_fn)(REGHANDLE, ULONG, PVOID, ULONG);
typedef NTSTATUS(NTAPI *etw_write_transfer_fn)(REGHANDLE, PCEVENT_DESCRIPTOR, LPCGUID, LPCGUID, ULONG,
                                               PEVENT_DATA_DESCRIPTOR);

#define EVENT_PROVIDER_SET_TRAITS 2u /* EVENT_INFO_CLASS: also makes ETW honour the descriptors' Type */
#define DESC_TYPE_EVENT_METADATA 1u
#define DESC_TYPE_PROVIDER_METADATA 2u

static const GUID provider_id = {SQ_TLG_GUID_DATA1, SQ_TLG_GUID_DATA2, SQ_TLG_GUID_DATA3, SQ_TLG_GUID_DATA4};

/* Built once at start; EtwWriteTransfer reads them at any IRQL, so they
 * live in the image's non-paged data, never on a pageable stack. */
static struct {
    etw_register_fn reg;
    etw_unregister_fn unreg;
    etw_set_information_fn set_info;
    etw_write_transfer_fn write;
    REGHANDLE handle;
    BOOLEAN registered;
    BOOLEAN stopping; /* under g_sqfw.lock: no enable callback re-attaches the tap */
    UCHAR level;      /* what the sessions asked for (the enable callback) */
    ULONGLONG any, all;
    USHORT provider_len;
    USHORT meta_len[SQ_TLG_EVENTS];
    UINT8 provider[64];
    UINT8 meta[SQ_TLG_EVENTS][SQ_TLG_META_MAX];
} g_etw;

static PVOID routine(PCWSTR name)
{
    UNICODE_STRING s;
    RtlInitUnicodeString(&s, name);
    return MmGetSystemRoutineAddress(&s);
}

static void desc(EVENT_DATA_DESCRIPTOR *d, const void *p, ULONG n, ULONG type)
{
    d->Ptr = (ULONGLONG)(ULONG_PTR)p;
    d->Size = n;
    d->Reserved = type; /* the Type byte is the low byte of Reserved */
}

/* Called under g_sqfw.lock by the engine for every event it records. */
static void tap(void *ctx, const sqfw_event *ev)
{
    (void)ctx;
    const sq_tlg_event_def *def = sq_tlg_event_for(ev->type);
    if (!def || !sq_tlg_enabled(def->level, def->keyword, g_etw.level, g_etw.any, g_etw.all))
        return;
    UINT32 i = (UINT32)(def - sq_tlg_events);
    UINT8 payload[SQ_TLG_PAYLOAD_MAX];
    size_t n = sq_tlg_payload(ev, payload, sizeof payload);
    EVENT_DESCRIPTOR ed;
    sq_zero(&ed, sizeof ed);
    ed.Channel = SQ_TLG_CHANNEL;
    ed.Level = def->level;
    ed.Keyword = def->keyword;
    EVENT_DATA_DESCRIPTOR dd[3];
    desc(&dd[0], g_etw.provider, g_etw.provider_len, DESC_TYPE_PROVIDER_METADATA);
    desc(&dd[1], g_etw.meta[i], g_etw.meta_len[i], DESC_TYPE_EVENT_METADATA);
    desc(&dd[2], payload, (ULONG)n, 0);
    if (n && NT_SUCCESS(g_etw.write(g_etw.handle, &ed, NULL, NULL, 3, dd)))
        g_sqfw.etw_written++;
    else
        g_sqfw.etw_failed++;
}

/* ETW calls this at PASSIVE_LEVEL when a session enables or disables the
 * provider (with the sessions' combined level and keywords). The tap is
 * set only while someone listens, so the packet path pays one branch
 * otherwise. */
static VOID NTAPI enable_callback(LPCGUID source, ULONG code, UCHAR level, ULONGLONG any, ULONGLONG all,
                                  PEVENT_FILTER_DESCRIPTOR filter, PVOID ctx)
{
    (void)source, (void)filter, (void)ctx;
    if (code > 1) /* EVENT_CONTROL_CODE_CAPTURE_STATE: nothing to replay */
        return;
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    g_etw.level = level;
    g_etw.any = any;
    g_etw.all = all;
    if (!g_etw.stopping && g_sqfw.engine)
        sqfw_set_event_tap(g_sqfw.engine, code == 1 ? tap : NULL, NULL);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
}

void sqfw_etw_start(void)
{
    sq_zero(&g_etw, sizeof g_etw);
    g_etw.reg = (etw_register_fn)routine(L"EtwRegister");
    g_etw.unreg = (etw_unregister_fn)routine(L"EtwUnregister");
    g_etw.set_info = (etw_set_information_fn)routine(L"EtwSetInformation");
    g_etw.write = (etw_write_transfer_fn)routine(L"EtwWriteTransfer");
    if (!g_etw.reg || !g_etw.unreg || !g_etw.set_info || !g_etw.write) {
        g_sqfw.etw_state = SQFW_ETW_ABSENT;
        return;
    }
    g_etw.provider_len = (USHORT)sq_tlg_provider_meta(g_etw.provider, sizeof g_etw.provider);
    for (UINT32 i = 0; i < SQ_TLG_EVENTS; i++) {
        g_etw.meta_len[i] = (USHORT)sq_tlg_event_meta(&sq_tlg_events[i], g_etw.meta[i], SQ_TLG_META_MAX);
        if (!g_etw.meta_len[i])
            g_etw.provider_len = 0;
    }
    if (!g_etw.provider_len || !NT_SUCCESS(g_etw.reg(&provider_id, enable_callback, NULL, &g_etw.handle))) {
        g_sqfw.etw_state = SQFW_ETW_FAILED;
        return;
    }
    g_etw.registered = TRUE;
    /* the traits (the provider's name) are what make ETW read the Type of
     * each data descriptor; without them the metadata would be payload */
    if (!NT_SUCCESS(g_etw.set_info(g_etw.handle, EVENT_PROVIDER_SET_TRAITS, g_etw.provider, g_etw.provider_len))) {
        sqfw_etw_stop();
        g_sqfw.etw_state = SQFW_ETW_FAILED;
        return;
    }
    g_sqfw.etw_state = SQFW_ETW_ON;
}

void sqfw_etw_stop(void)
{
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    g_etw.stopping = TRUE;
    if (g_sqfw.engine)
        sqfw_set_event_tap(g_sqfw.engine, NULL, NULL);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (g_etw.registered)
        g_etw.unreg(g_etw.handle);
    g_etw.registered = FALSE;
}
