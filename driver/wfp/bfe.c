/* The base filtering engine (BFE) owns the management objects: the
 * session, sublayer, callouts and filters. A boot-start driver can load
 * before BFE runs, and BFE can stop and start again while the driver stays,
 * taking the dynamic session with it. Instead of a service dependency (which
 * a boot-start driver cannot have on a user-mode service), the driver
 * subscribes to BFE's state: the session is set up when BFE runs, now or
 * later, and dropped when BFE stops. The callouts themselves are registered
 * with the kernel at load and need no BFE. */
#include "glue.h"

/* A synchronization event used as a lock: it keeps PASSIVE_LEVEL, which the
 * Fwpm calls need (a fast mutex would raise to APC_LEVEL). */
void sqfw_session_lock(void)
{
    KeWaitForSingleObject(&g_sqfw.session_lock, Executive, KernelMode, FALSE, NULL);
}

void sqfw_session_unlock(void)
{
    KeSetEvent(&g_sqfw.session_lock, 0, FALSE);
}

/* The caller holds the session lock. */
static NTSTATUS follow(FWPM_SERVICE_STATE state)
{
    NTSTATUS st = STATUS_SUCCESS;
    if (state == FWPM_SERVICE_RUNNING && !g_sqfw.wfp_engine) {
        st = sqfw_callouts_add_filters();
        if (!NT_SUCCESS(st)) {
            sqfw_callouts_remove_filters();
            InterlockedIncrement(&g_sqfw.bfe_failures);
        }
    } else if (state == FWPM_SERVICE_STOP_PENDING) {
        sqfw_callouts_remove_filters(); /* BFE goes, and the session's objects with it */
    }
    return st;
}

_IRQL_requires_(PASSIVE_LEVEL)
static void NTAPI bfe_changed(void *context, FWPM_SERVICE_STATE state)
{
    (void)context;
    sqfw_session_lock();
    follow(state);
    sqfw_session_unlock();
}

/* Subscribe first, then read the state: a change in between is not lost
 * (following the same state twice does nothing). A load while BFE runs
 * fails if the session cannot be set up, as before. */
NTSTATUS sqfw_bfe_start(PDEVICE_OBJECT device)
{
    NTSTATUS st = FwpmBfeStateSubscribeChanges0(device, bfe_changed, NULL, &g_sqfw.bfe_subscription);
    if (!NT_SUCCESS(st)) {
        g_sqfw.bfe_subscription = NULL;
        return st;
    }
    sqfw_session_lock();
    st = follow(FwpmBfeStateGet0());
    sqfw_session_unlock();
    return st;
}

void sqfw_bfe_stop(void)
{
    if (g_sqfw.bfe_subscription) {
        FwpmBfeStateUnsubscribeChanges0(g_sqfw.bfe_subscription);
        g_sqfw.bfe_subscription = NULL;
    }
}
