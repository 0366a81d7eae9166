/* Event channel: the agent keeps IOCTL_SQFW_WAIT_EVENTS requests pending in
 * a cancel-safe queue (IoCsq*), so a cancelled or closed handle can never
 * race with the completion; the worker fills them from the core's ring. */
#include "glue.h"

static void NTAPI csq_insert(PIO_CSQ csq, PIRP irp)
{
    (void)csq;
    InsertTailList(&g_sqfw.pending_irps, &irp->Tail.Overlay.ListEntry);
}

static void NTAPI csq_remove(PIO_CSQ csq, PIRP irp)
{
    (void)csq;
    RemoveEntryList(&irp->Tail.Overlay.ListEntry);
}

/* ctx, when given, is a file object: only that handle's requests match. */
static PIRP NTAPI csq_peek(PIO_CSQ csq, PIRP irp, PVOID ctx)
{
    (void)csq;
    LIST_ENTRY *next = irp ? irp->Tail.Overlay.ListEntry.Flink : g_sqfw.pending_irps.Flink;
    for (; next != &g_sqfw.pending_irps; next = next->Flink) {
        PIRP cand = CONTAINING_RECORD(next, IRP, Tail.Overlay.ListEntry);
        if (!ctx || IoGetCurrentIrpStackLocation(cand)->FileObject == ctx)
            return cand;
    }
    return NULL;
}

static void NTAPI csq_lock(PIO_CSQ csq, PKIRQL irql)
{
    (void)csq;
    KeAcquireSpinLock(&g_sqfw.csq_lock, irql);
}

static void NTAPI csq_unlock(PIO_CSQ csq, KIRQL irql)
{
    (void)csq;
    KeReleaseSpinLock(&g_sqfw.csq_lock, irql);
}

static void NTAPI csq_cancel(PIO_CSQ csq, PIRP irp)
{
    (void)csq;
    irp->IoStatus.Status = STATUS_CANCELLED;
    irp->IoStatus.Information = 0;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
}

void sqfw_events_init(void)
{
    InitializeListHead(&g_sqfw.pending_irps);
    KeInitializeSpinLock(&g_sqfw.csq_lock);
    IoCsqInitialize(&g_sqfw.csq, csq_insert, csq_remove, csq_peek, csq_lock, csq_unlock, csq_cancel);
}

/* Copies as many whole events as fit; returns the byte count. */
static ULONG fill(PIRP irp)
{
    PIO_STACK_LOCATION sp = IoGetCurrentIrpStackLocation(irp);
    ULONG cap = sp->Parameters.DeviceIoControl.OutputBufferLength / sizeof(sqfw_event);
    sqfw_event *out = (sqfw_event *)irp->AssociatedIrp.SystemBuffer;
    ULONG n = 0;
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    while (n < cap && sqfw_next_event(g_sqfw.engine, &out[n]))
        n++;
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    return n * (ULONG)sizeof(sqfw_event);
}

NTSTATUS sqfw_events_wait(PIRP irp)
{
    /* the dispatcher's table has checked there is room for one event */
    ULONG bytes = fill(irp);
    if (bytes) {
        irp->IoStatus.Information = bytes;
        return STATUS_SUCCESS;
    }
    IoCsqInsertIrp(&g_sqfw.csq, irp, NULL); /* marks the IRP pending */
    return STATUS_PENDING;
}

void sqfw_events_deliver(void)
{
    for (;;) {
        PIRP irp = IoCsqRemoveNextIrp(&g_sqfw.csq, NULL);
        if (!irp)
            return;
        ULONG bytes = fill(irp);
        if (!bytes) {
            IoCsqInsertIrp(&g_sqfw.csq, irp, NULL); /* nothing yet: keep waiting */
            return;
        }
        irp->IoStatus.Status = STATUS_SUCCESS;
        irp->IoStatus.Information = bytes;
        IoCompleteRequest(irp, IO_NO_INCREMENT);
    }
}

void sqfw_events_cancel_file(PFILE_OBJECT file)
{
    PIRP irp;
    while (file && (irp = IoCsqRemoveNextIrp(&g_sqfw.csq, file)) != NULL) {
        irp->IoStatus.Status = STATUS_CANCELLED;
        irp->IoStatus.Information = 0;
        IoCompleteRequest(irp, IO_NO_INCREMENT);
    }
}

void sqfw_events_cancel_all(void)
{
    PIRP irp;
    while ((irp = IoCsqRemoveNextIrp(&g_sqfw.csq, NULL)) != NULL) {
        irp->IoStatus.Status = STATUS_CANCELLED;
        irp->IoStatus.Information = 0;
        IoCompleteRequest(irp, IO_NO_INCREMENT);
    }
}
