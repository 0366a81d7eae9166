/* The worker: re-injects queued packets when their class has tokens,
 * completes pended connects the agent answered (or that timed out), ticks
 * the QGuard allocation and delivers events to waiting IRPs. Nothing on
 * the packet path waits; everything slow happens here at PASSIVE_LEVEL. */
#include "glue.h"

#define TICK_NS 100000000ull /* demand estimates and shares every 100 ms */

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

static void free_queued(sqfw_queued *q)
{
    FwpsFreeCloneNetBufferList0(q->clone, 0);
    sqfw_flow_ctx_release(q->flow);
    ExFreePoolWithTag(q, SQFW_TAG);
}

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
                sqfw_packet(g_sqfw.engine, q->flow->flow_id, q->bytes, now, &d);
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

static void complete_pends(UINT64 now)
{
    for (;;) {
        UINT32 slot, verdict, expired;
        HANDLE h = NULL;
        KIRQL irql;
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        int got = sqfw_pend_take_ready(g_sqfw.engine, now, &slot, &verdict, &expired);
        if (got && slot < SQFW_MAX_PENDED) {
            h = g_sqfw.pend_completion[slot];
            g_sqfw.pend_completion[slot] = NULL;
        }
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        if (!got)
            return;
        /* completing triggers a re-authorisation classify that finds the
         * attested hash, or gets the time-out verdict (SQFW_RF_REAUTH) */
        if (h)
            FwpsCompleteOperation0(h, NULL);
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
        wait = drain_queues(now);
        sqfw_events_deliver();
    }
    PsTerminateSystemThread(STATUS_SUCCESS);
}

NTSTATUS sqfw_shaper_start(void)
{
    for (UINT32 c = 0; c < SQFW_QUEUE_CLASSES; c++)
        InitializeListHead(&g_sqfw.queues[c]);
    KeInitializeEvent(&g_sqfw.stop, NotificationEvent, FALSE);
    KeInitializeEvent(&g_sqfw.kick, SynchronizationEvent, FALSE);
    NTSTATUS st = FwpsInjectionHandleCreate0(AF_INET, FWPS_INJECTION_TYPE_TRANSPORT, &g_sqfw.inject_v4);
    if (NT_SUCCESS(st))
        st = FwpsInjectionHandleCreate0(AF_INET6, FWPS_INJECTION_TYPE_TRANSPORT, &g_sqfw.inject_v6);
    if (!NT_SUCCESS(st))
        return st;
    HANDLE thread;
    st = PsCreateSystemThread(&thread, THREAD_ALL_ACCESS, NULL, NULL, NULL, worker, NULL);
    if (!NT_SUCCESS(st))
        return st;
    st = ObReferenceObjectByHandle(thread, THREAD_ALL_ACCESS, NULL, KernelMode, (PVOID *)&g_sqfw.worker, NULL);
    ZwClose(thread);
    return st;
}

void sqfw_shaper_stop(void)
{
    InterlockedExchange(&g_sqfw.stopping, 1);
    KeSetEvent(&g_sqfw.stop, 0, FALSE);
    if (g_sqfw.worker) {
        KeWaitForSingleObject(g_sqfw.worker, Executive, KernelMode, FALSE, NULL);
        ObDereferenceObject(g_sqfw.worker);
        g_sqfw.worker = NULL;
    }
    /* release every packet still queued */
    for (UINT32 c = 0; c < SQFW_QUEUE_CLASSES; c++) {
        for (;;) {
            KIRQL irql;
            KeAcquireSpinLock(&g_sqfw.lock, &irql);
            sqfw_queued *q = NULL;
            if (g_sqfw.queues[c].Flink && !IsListEmpty(&g_sqfw.queues[c])) {
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
}
