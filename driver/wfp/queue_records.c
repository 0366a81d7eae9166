/* Records for deferred packets come from one array taken at load, so the
 * transport classify never asks the pool allocator for them (only WFP's
 * clone of the packet is allocated there, which re-injection needs), and
 * the array's size is the bound on deferred packets over every class. */
#include "glue.h"

NTSTATUS sqfw_queue_records_alloc(void)
{
    InitializeListHead(&g_sqfw.queue_free);
    g_sqfw.queue_records =
        ExAllocatePoolWithTag(NonPagedPoolNx, (SIZE_T)SQFW_MAX_QUEUED_TOTAL * sizeof(sqfw_queued), SQFW_TAG);
    if (!g_sqfw.queue_records)
        return STATUS_INSUFFICIENT_RESOURCES;
    for (UINT32 i = 0; i < SQFW_MAX_QUEUED_TOTAL; i++)
        InsertTailList(&g_sqfw.queue_free, &g_sqfw.queue_records[i].link);
    return STATUS_SUCCESS;
}

/* After the injection handles are gone: no completion can give a record
 * back any more. */
void sqfw_queue_records_free(void)
{
    if (!g_sqfw.queue_records)
        return;
    ExFreePoolWithTag(g_sqfw.queue_records, SQFW_TAG);
    g_sqfw.queue_records = NULL;
    InitializeListHead(&g_sqfw.queue_free);
}

/* A zeroed record, or NULL when SQFW_MAX_QUEUED_TOTAL packets are deferred
 * or being re-injected. */
sqfw_queued *sqfw_queue_record_take(void)
{
    sqfw_queued *q = NULL;
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    if (!IsListEmpty(&g_sqfw.queue_free))
        q = CONTAINING_RECORD(RemoveHeadList(&g_sqfw.queue_free), sqfw_queued, link);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (q) {
        sq_zero(q, sizeof *q);
        q->pooled = 1;
    }
    return q;
}

void sqfw_queue_record_give(sqfw_queued *q)
{
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    InsertHeadList(&g_sqfw.queue_free, &q->link);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
}
