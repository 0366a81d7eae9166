/* The worker: re-injects queued packets when their class has tokens,
 * completes pended connects the agent answered (or that timed out), ticks
 * the QGuard allocation and delivers events to waiting IRPs. Nothing on
 * the packet path waits; everything slow happens here at PASSIVE_LEVEL. */
#include "glue.h"
#include "request.h"

#define TICK_NS 100000000ull /* demand estimates and shares every 100 ms */
/* a completed outbound pend whose re-authorisation never came (the
 * connection was abandoned) is dropped after this */
#define REAUTH_WAIT_NS 30000000000ull

void sqfw_flow_ctx_release(sqfw_flow_ctx *ctx)
{
    if (InterlockedDecrement(&ctx->refs) != 0)
        return;
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    RemoveEntryList(&ctx->link);
    sqfw_flow_unref(g_sqfw.engine, ctx->flow_id);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    ExFreePoolWithTag(ctx, SQFW_TAG);
}

BOOLEAN sqfw_shaper_enqueue(sqfw_queued *q, UINT32 class_id)
{
    UINT32 c = class_id % SQFW_QUEUE_CLASSES;
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    BOOLEAN ok = !g_sqfw.stopping && g_sqfw.queued[c] < SQFW_MAX_QUEUED_PER_CLASS;
    if (ok) {
        InterlockedIncrement(&q->flow->refs);
        InsertTailList(&g_sqfw.queues[c], &q->link);
        g_sqfw.queued[c]++;
    }
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (ok)
        KeSetEvent(&g_sqfw.kick, 0, FALSE);
    return ok;
}

/* Frees a queued packet, or a pend record through its leading packet. */
void sqfw_free_queued(sqfw_queued *q)
{
    if (q->clone)
        FwpsFreeCloneNetBufferList0(q->clone, 0);
    if (q->flow)
        sqfw_flow_ctx_release(q->flow);
    if (q->pooled)
        sqfw_queue_record_give(q);
    else
        ExFreePoolWithTag(q, SQFW_TAG);
}
#define free_queued sqfw_free_queued

/* Removes every queued packet of a flow that is going away. */
void sqfw_shaper_drop_flow(sqfw_flow_ctx *flow)
{
    LIST_ENTRY doomed;
    InitializeListHead(&doomed);
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    for (UINT32 c = 0; c < SQFW_QUEUE_CLASSES; c++) {
        LIST_ENTRY *e = g_sqfw.queues[c].Flink;
        while (e != &g_sqfw.queues[c]) {
            LIST_ENTRY *next = e->Flink;
            sqfw_queued *q = CONTAINING_RECORD(e, sqfw_queued, link);
            if (q->flow == flow) {
                RemoveEntryList(e);
                g_sqfw.queued[c]--;
                InsertTailList(&doomed, e);
            }
            e = next;
        }
    }
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    while (!IsListEmpty(&doomed))
        free_queued(CONTAINING_RECORD(RemoveHeadList(&doomed), sqfw_queued, link));
}

static void NTAPI inject_done(void *context, NET_BUFFER_LIST *nbl, BOOLEAN dispatch)
{
    (void)nbl, (void)dispatch;
    free_queued((sqfw_queued *)context);
}

static void inject(sqfw_queued *q)
{
    HANDLE h = q->family == 4 ? g_sqfw.inject_v4 : g_sqfw.inject_v6;
    ADDRESS_FAMILY af = q->family == 4 ? AF_INET : AF_INET6;
    NTSTATUS st;
    if (q->outbound) {
        FWPS_TRANSPORT_SEND_PARAMS0 p;
        sq_zero(&p, sizeof p);
        p.remoteAddress = q->remote_addr;
        p.remoteScopeId = q->scope_id;
        st = FwpsInjectTransportSendAsync0(h, NULL, q->endpoint, 0, &p, af, q->compartment, q->clone, inject_done, q);
    } else {
        st = FwpsInjectTransportReceiveAsync0(h, NULL, NULL, 0, af, q->compartment, q->if_index, q->sub_if_index,
                                              q->clone, inject_done, q);
    }
    if (!NT_SUCCESS(st))
        free_queued(q); /* completion will not run */
}

/* Returns nanoseconds until the earliest queued packet may conform. */
static UINT64 drain_queues(UINT64 now)
{
    UINT64 wait = TICK_NS;
    for (UINT32 c = 0; c < SQFW_QUEUE_CLASSES; c++) {
        for (;;) {
            sqfw_queued *ready = NULL, *dropped = NULL;
            KIRQL irql;
            KeAcquireSpinLock(&g_sqfw.lock, &irql);
            if (!IsListEmpty(&g_sqfw.queues[c])) {
                sqfw_queued *q = CONTAINING_RECORD(g_sqfw.queues[c].Flink, sqfw_queued, link);
                sqfw_decision d;
                /* a retry, not a new arrival: QGuard's demand estimate counts each packet once */
                sqfw_packet_retry(g_sqfw.engine, q->flow->flow_id, q->bytes, now, &d);
                if (d.verdict == SQFW_DEFER) {
                    if (d.wait_ns < wait)
                        wait = d.wait_ns;
                } else {
                    RemoveEntryList(&q->link);
                    g_sqfw.queued[c]--;
                    if (d.verdict == SQFW_ALLOW)
                        ready = q;
                    else
                        dropped = q;
                }
            }
            KeReleaseSpinLock(&g_sqfw.lock, irql);
            if (ready)
                inject(ready);
            else if (dropped)
                free_queued(dropped);
            else
                break;
        }
    }
    return wait;
}

/* Completes the pends the core reports ready (answered, or out of time).
 * Outbound: completing triggers a re-authorisation classify that the core
 * decides (attested hash, or the time-out verdict), and which takes the
 * record back to inject the kept datagram. Inbound: completion triggers no
 * re-authorisation, so the decision is taken here; a permitted connection's
 * packet is handed back with the completion and receive-injected, as
 * Microsoft's inspect sample does; a refused one is completed without it. */
static void complete_pends(UINT64 now)
{
    for (;;) {
        UINT32 slot, verdict, expired;
        sqfw_pended *p = NULL;
        HANDLE h = NULL;
        BOOLEAN allow = FALSE;
        KIRQL irql;
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        int got = sqfw_pend_take_ready(g_sqfw.engine, now, &slot, &verdict, &expired);
        if (got && slot < SQFW_MAX_PENDED) {
            p = g_sqfw.pend[slot];
            g_sqfw.pend[slot] = NULL;
        }
        if (p) {
            h = p->completion;
            p->completion = NULL;
            if (p->pkt.outbound) {
                p->completed_ns = now;
                InsertTailList(&g_sqfw.reauth_wait, &p->pkt.link);
            } else {
                sqfw_decision d;
                p->req.req.flags |= SQFW_RF_REAUTH;
                allow = sqfw_authorize(g_sqfw.engine, &p->req.req, now, &d) == SQFW_OK && d.verdict == SQFW_ALLOW;
            }
        }
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        if (!got)
            return;
        if (!p)
            continue;
        if (p->pkt.outbound) {
            FwpsCompleteOperation0(h, NULL); /* p now belongs to the re-authorisation */
        } else if (allow && p->pkt.clone) {
            FwpsCompleteOperation0(h, p->pkt.clone);
            inject(&p->pkt);
        } else {
            FwpsCompleteOperation0(h, NULL);
            free_queued(&p->pkt);
        }
    }
}

/* Injects the kept datagrams of permitted outbound pends; drops records
 * whose re-authorisation never came. */
static void inject_pended(UINT64 now)
{
    for (;;) {
        sqfw_queued *q = NULL, *old = NULL;
        KIRQL irql;
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        if (!IsListEmpty(&g_sqfw.inject_ready)) {
            q = CONTAINING_RECORD(RemoveHeadList(&g_sqfw.inject_ready), sqfw_queued, link);
        } else if (!IsListEmpty(&g_sqfw.reauth_wait)) {
            sqfw_pended *p = CONTAINING_RECORD(g_sqfw.reauth_wait.Flink, sqfw_pended, pkt.link);
            if (now - p->completed_ns >= REAUTH_WAIT_NS) {
                RemoveEntryList(&p->pkt.link);
                old = &p->pkt;
            }
        }
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        if (q)
            inject(q);
        else if (old)
            free_queued(old);
        else
            return;
    }
}

/* Unload, after the worker has stopped: every armed pend is completed
 * (its re-authorisation, if any, finds no filter of ours any more) and
 * every kept clone freed. Each record is taken under the lock. */
void sqfw_pends_release(void)
{
    for (UINT32 i = 0; i < SQFW_MAX_PENDED; i++) {
        KIRQL irql;
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        sqfw_pended *p = g_sqfw.pend[i];
        g_sqfw.pend[i] = NULL;
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        if (!p)
            continue;
        FwpsCompleteOperation0(p->completion, NULL);
        free_queued(&p->pkt);
    }
    LIST_ENTRY *lists[2] = {&g_sqfw.reauth_wait, &g_sqfw.inject_ready};
    for (int l = 0; l < 2; l++) {
        for (;;) {
            sqfw_queued *q = NULL;
            KIRQL irql;
            KeAcquireSpinLock(&g_sqfw.lock, &irql);
            if (!IsListEmpty(lists[l]))
                q = CONTAINING_RECORD(RemoveHeadList(lists[l]), sqfw_queued, link);
            KeReleaseSpinLock(&g_sqfw.lock, irql);
            if (!q)
                break;
            free_queued(q);
        }
    }
}

static void NTAPI worker(void *unused)
{
    (void)unused;
    PVOID objs[2] = {&g_sqfw.stop, &g_sqfw.kick};
    UINT64 wait = TICK_NS, last_tick = 0;
    for (;;) {
        LARGE_INTEGER timeout;
        timeout.QuadPart = -(LONGLONG)(wait / 100 ? wait / 100 : 1); /* relative, 100 ns units */
        NTSTATUS st = KeWaitForMultipleObjects(2, objs, WaitAny, Executive, KernelMode, FALSE, &timeout, NULL);
        if (st == STATUS_WAIT_0 || g_sqfw.stopping)
            break;
        UINT64 now = sqfw_now_ns();
        if (now - last_tick >= TICK_NS) {
            KIRQL irql;
            KeAcquireSpinLock(&g_sqfw.lock, &irql);
            sqfw_tick(g_sqfw.engine, now);
            KeReleaseSpinLock(&g_sqfw.lock, irql);
            last_tick = now;
        }
        complete_pends(now);
        inject_pended(now);
        wait = drain_queues(now);
        sqfw_events_deliver();
    }
    PsTerminateSystemThread(STATUS_SUCCESS);
}

/* Lists and events first, in DriverEntry before anything can fail: every
 * teardown path sets and waits on them. */
void sqfw_shaper_init(void)
{
    for (UINT32 c = 0; c < SQFW_QUEUE_CLASSES; c++)
        InitializeListHead(&g_sqfw.queues[c]);
    InitializeListHead(&g_sqfw.reauth_wait);
    InitializeListHead(&g_sqfw.inject_ready);
    KeInitializeEvent(&g_sqfw.stop, NotificationEvent, FALSE);
    KeInitializeEvent(&g_sqfw.kick, SynchronizationEvent, FALSE);
}

NTSTATUS sqfw_shaper_start(void)
{
    NTSTATUS st = sqfw_queue_records_alloc();
    if (NT_SUCCESS(st))
        st = FwpsInjectionHandleCreate0(AF_INET, FWPS_INJECTION_TYPE_TRANSPORT, &g_sqfw.inject_v4);
    if (NT_SUCCESS(st))
        st = FwpsInjectionHandleCreate0(AF_INET6, FWPS_INJECTION_TYPE_TRANSPORT, &g_sqfw.inject_v6);
    if (!NT_SUCCESS(st))
        return st;
    HANDLE thread;
    st = PsCreateSystemThread(&thread, THREAD_ALL_ACCESS, NULL, NULL, NULL, worker, NULL);
    if (!NT_SUCCESS(st))
        return st;
    st = ObReferenceObjectByHandle(thread, THREAD_ALL_ACCESS, NULL, KernelMode, (PVOID *)&g_sqfw.worker, NULL);
    if (!NT_SUCCESS(st)) {
        /* without the object we could not wait for the thread: stop it now */
        InterlockedExchange(&g_sqfw.stopping, 1);
        KeSetEvent(&g_sqfw.stop, 0, FALSE);
        ZwWaitForSingleObject(thread, FALSE, NULL);
    }
    ZwClose(thread);
    return st;
}

/* After this, nothing but the unload path touches pends and queues. */
void sqfw_shaper_stop_worker(void)
{
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    g_sqfw.stopping = 1; /* no new pends, queued packets or injections */
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    KeSetEvent(&g_sqfw.stop, 0, FALSE);
    if (g_sqfw.worker) {
        KeWaitForSingleObject(g_sqfw.worker, Executive, KernelMode, FALSE, NULL);
        ObDereferenceObject(g_sqfw.worker);
        g_sqfw.worker = NULL;
    }
}

void sqfw_shaper_release(void)
{
    for (UINT32 c = 0; c < SQFW_QUEUE_CLASSES; c++) {
        for (;;) {
            KIRQL irql;
            KeAcquireSpinLock(&g_sqfw.lock, &irql);
            sqfw_queued *q = NULL;
            if (!IsListEmpty(&g_sqfw.queues[c])) {
                q = CONTAINING_RECORD(RemoveHeadList(&g_sqfw.queues[c]), sqfw_queued, link);
                g_sqfw.queued[c]--;
            }
            KeReleaseSpinLock(&g_sqfw.lock, irql);
            if (!q)
                break;
            free_queued(q);
        }
    }
    if (g_sqfw.inject_v4)
        FwpsInjectionHandleDestroy0(g_sqfw.inject_v4);
    if (g_sqfw.inject_v6)
        FwpsInjectionHandleDestroy0(g_sqfw.inject_v6);
    g_sqfw.inject_v4 = g_sqfw.inject_v6 = NULL;
    sqfw_queue_records_free();
}
