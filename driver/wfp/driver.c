/* DriverEntry, unload and the IOCTL surface. Policies are validated and
 * compiled into a fresh NonPagedPoolNx arena outside the lock, then swapped
 * in under it, so classification never sees a half-built policy. */
#include "glue.h"

sqfw_glue g_sqfw;

NTSTATUS NTAPI DriverEntry(PDRIVER_OBJECT driver, PUNICODE_STRING registry);

UINT64 sqfw_now_ns(void)
{
    /* interrupt time: monotonic, 100 ns units, callable at any IRQL */
    return (UINT64)KeQueryInterruptTime() * 100ull;
}

static NTSTATUS set_policy(const UINT8 *blob, ULONG len, sqfw_set_policy_out *res)
{
    size_t need = 0;
    uint32_t off = 0;
    int rc = sqfw_policy_arena_size(blob, len, &need, &off);
    void *mem = NULL;
    sqfw_policy *p = NULL, *old = NULL;
    if (rc == SQFW_OK) {
        mem = ExAllocatePoolWithTag(NonPagedPoolNx, need, SQFW_TAG);
        rc = mem ? sqfw_policy_compile(blob, len, mem, need, &p, &off) : SQFW_E_NOMEM;
    }
    if (rc == SQFW_OK) {
        KIRQL irql;
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        rc = sqfw_engine_install(g_sqfw.engine, p, sqfw_now_ns(), &old);
        void *old_mem = g_sqfw.policy_mem;
        if (rc == SQFW_OK)
            g_sqfw.policy_mem = mem;
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        /* every core call runs under the lock, so nothing uses the old arena now */
        if (rc == SQFW_OK) {
            mem = old_mem;
        }
    }
    if (mem)
        ExFreePoolWithTag(mem, SQFW_TAG);
    res->status = (uint32_t)rc;
    res->err_offset = off;
    return rc == SQFW_OK ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

static NTSTATUS NTAPI dispatch_ioctl(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    PIO_STACK_LOCATION sp = IoGetCurrentIrpStackLocation(irp);
    ULONG code = sp->Parameters.DeviceIoControl.IoControlCode;
    ULONG in_len = sp->Parameters.DeviceIoControl.InputBufferLength;
    ULONG out_len = sp->Parameters.DeviceIoControl.OutputBufferLength;
    void *buf = irp->AssociatedIrp.SystemBuffer;
    NTSTATUS st = STATUS_INVALID_DEVICE_REQUEST;
    ULONG info = 0;
    KIRQL irql;

    switch (code) {
    case IOCTL_SQFW_GET_VERSION:
        if (out_len < sizeof(sqfw_version_info)) {
            st = STATUS_BUFFER_TOO_SMALL;
            break;
        }
        {
            sqfw_version_info *v = buf;
            v->abi_version = SQFW_ABI_VERSION;
            v->format_version = SQFW_FORMAT_VERSION;
            v->driver_major = 1;
            v->driver_minor = 0;
        }
        info = sizeof(sqfw_version_info);
        st = STATUS_SUCCESS;
        break;
    case IOCTL_SQFW_SET_POLICY: {
        if (in_len < SQFW_HDR_SIZE || in_len > SQFW_MAX_BLOB || out_len < sizeof(sqfw_set_policy_out)) {
            st = STATUS_INVALID_PARAMETER;
            break;
        }
        /* METHOD_BUFFERED: input and output share the system buffer */
        UINT8 *copy = ExAllocatePoolWithTag(NonPagedPoolNx, in_len, SQFW_TAG);
        if (!copy) {
            st = STATUS_INSUFFICIENT_RESOURCES;
            break;
        }
        sq_copy(copy, buf, in_len);
        sqfw_set_policy_out res;
        set_policy(copy, in_len, &res);
        ExFreePoolWithTag(copy, SQFW_TAG);
        sq_copy(buf, &res, sizeof res);
        info = sizeof res;
        st = STATUS_SUCCESS; /* the verdict is in res.status */
        break;
    }
    case IOCTL_SQFW_GET_STATS:
        if (out_len < sizeof(sqfw_stats)) {
            st = STATUS_BUFFER_TOO_SMALL;
            break;
        }
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        sqfw_get_stats(g_sqfw.engine, (sqfw_stats *)buf);
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        info = sizeof(sqfw_stats);
        st = STATUS_SUCCESS;
        break;
    case IOCTL_SQFW_SET_LEVEL:
        if (in_len < sizeof(UINT32)) {
            st = STATUS_INVALID_PARAMETER;
            break;
        }
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        st = sqfw_set_level(g_sqfw.engine, *(const UINT32 *)buf, sqfw_now_ns()) == SQFW_OK ? STATUS_SUCCESS
                                                                                           : STATUS_INVALID_PARAMETER;
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        break;
    case IOCTL_SQFW_ATTEST:
        if (in_len < sizeof(sqfw_attest_in)) {
            st = STATUS_INVALID_PARAMETER;
            break;
        }
        {
            sqfw_attest_in a;
            sq_copy(&a, buf, sizeof a);
            KeAcquireSpinLock(&g_sqfw.lock, &irql);
            st = sqfw_attest(g_sqfw.engine, a.process_key, a.sha256, sqfw_now_ns()) == SQFW_OK
                     ? STATUS_SUCCESS
                     : STATUS_INVALID_PARAMETER;
            KeReleaseSpinLock(&g_sqfw.lock, irql);
            KeSetEvent(&g_sqfw.kick, 0, FALSE); /* complete the pended connects now */
        }
        break;
    case IOCTL_SQFW_BIND_SERVICE:
        if (in_len < sizeof(sqfw_bind_in)) {
            st = STATUS_INVALID_PARAMETER;
            break;
        }
        {
            sqfw_bind_in b;
            sq_copy(&b, buf, sizeof b);
            if (b.name_len > sizeof b.name) {
                st = STATUS_INVALID_PARAMETER;
                break;
            }
            KeAcquireSpinLock(&g_sqfw.lock, &irql);
            st = sqfw_service_bind(g_sqfw.engine, b.process_key, b.name, b.name_len) == SQFW_OK
                     ? STATUS_SUCCESS
                     : STATUS_INVALID_PARAMETER;
            KeReleaseSpinLock(&g_sqfw.lock, irql);
        }
        break;
    case IOCTL_SQFW_WAIT_EVENTS:
        st = sqfw_events_wait(irp);
        if (st == STATUS_PENDING)
            return st; /* owned by the cancel-safe queue now */
        info = (ULONG)irp->IoStatus.Information;
        break;
    default:
        break;
    }
    irp->IoStatus.Status = st;
    irp->IoStatus.Information = info;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return st;
}

/* The last handle to a file object is going: its waiting event requests
 * must not outlive it. */
static NTSTATUS NTAPI dispatch_cleanup(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    sqfw_events_cancel_file(IoGetCurrentIrpStackLocation(irp)->FileObject);
    irp->IoStatus.Status = STATUS_SUCCESS;
    irp->IoStatus.Information = 0;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return STATUS_SUCCESS;
}

static NTSTATUS NTAPI dispatch_create_close(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    irp->IoStatus.Status = STATUS_SUCCESS;
    irp->IoStatus.Information = 0;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return STATUS_SUCCESS;
}

static void teardown(PDRIVER_OBJECT driver)
{
    /* Order: no new classifies and no flow contexts; then no worker, so
     * nothing else completes pends; then the pends; then the callouts (which
     * WFP lets go only once no context references them); then packets,
     * injection handles and waiting IRPs. */
    sqfw_callouts_detach();
    sqfw_shaper_stop_worker();
    sqfw_pends_release();
    sqfw_callouts_unregister();
    sqfw_shaper_release();
    sqfw_events_cancel_all();
    if (g_sqfw.engine) {
        sqfw_engine_detach(g_sqfw.engine);
        g_sqfw.engine = NULL;
    }
    if (g_sqfw.policy_mem)
        ExFreePoolWithTag(g_sqfw.policy_mem, SQFW_TAG);
    if (g_sqfw.engine_mem)
        ExFreePoolWithTag(g_sqfw.engine_mem, SQFW_TAG);
    g_sqfw.policy_mem = g_sqfw.engine_mem = NULL;
    UNICODE_STRING dos;
    RtlInitUnicodeString(&dos, SQFW_DOS_NAME);
    IoDeleteSymbolicLink(&dos);
    if (driver->DeviceObject)
        IoDeleteDevice(driver->DeviceObject);
}

static void NTAPI unload(PDRIVER_OBJECT driver)
{
    teardown(driver);
}

NTSTATUS NTAPI DriverEntry(PDRIVER_OBJECT driver, PUNICODE_STRING registry)
{
    (void)registry;
    sq_zero(&g_sqfw, sizeof g_sqfw);
    KeInitializeSpinLock(&g_sqfw.lock);
    InitializeListHead(&g_sqfw.flows);
    sqfw_shaper_init();
    sqfw_events_init();

    sqfw_limits lim;
    sq_zero(&lim, sizeof lim);
    lim.max_flows = 1u << 18;
    lim.max_syn_slots = 1u << 16;
    lim.max_attest = 4096;
    lim.max_services = 1024;
    lim.max_events = 4096;
    /* per-boot secret for the SYN table: cycle counter, boot time and ASLR */
    lim.seed = (uint64_t)__builtin_ia32_rdtsc() * 0x9E3779B97F4A7C15ull ^ (uint64_t)KeQueryInterruptTime() ^
               (uint64_t)(ULONG_PTR)&lim;

    size_t size = sqfw_engine_size(&lim);
    g_sqfw.engine_mem = ExAllocatePoolWithTag(NonPagedPoolNx, size, SQFW_TAG);
    if (!g_sqfw.engine_mem)
        return STATUS_INSUFFICIENT_RESOURCES;
    if (sqfw_engine_init(g_sqfw.engine_mem, size, &lim, &g_sqfw.engine) != SQFW_OK) {
        ExFreePoolWithTag(g_sqfw.engine_mem, SQFW_TAG);
        return STATUS_INSUFFICIENT_RESOURCES;
    }

    UNICODE_STRING name, dos;
    RtlInitUnicodeString(&name, SQFW_DEVICE_NAME);
    RtlInitUnicodeString(&dos, SQFW_DOS_NAME);
    NTSTATUS st = IoCreateDevice(driver, 0, &name, FILE_DEVICE_NETWORK, FILE_DEVICE_SECURE_OPEN, FALSE,
                                 &g_sqfw.device);
    if (NT_SUCCESS(st))
        st = IoCreateSymbolicLink(&dos, &name);
    driver->MajorFunction[IRP_MJ_CREATE] = dispatch_create_close;
    driver->MajorFunction[IRP_MJ_CLOSE] = dispatch_create_close;
    driver->MajorFunction[IRP_MJ_CLEANUP] = dispatch_cleanup;
    driver->MajorFunction[IRP_MJ_DEVICE_CONTROL] = dispatch_ioctl;
    driver->DriverUnload = unload;
    if (NT_SUCCESS(st))
        st = sqfw_shaper_start();
    if (NT_SUCCESS(st))
        st = sqfw_callouts_register(g_sqfw.device);
    if (!NT_SUCCESS(st))
        teardown(driver);
    return st;
}
