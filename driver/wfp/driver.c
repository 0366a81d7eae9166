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

/* The blob is read from the IRP's system buffer, which user mode cannot
 * touch, and is not needed once compiled: no copy. The output shares that
 * buffer, so the result is written only after the compile. */
static NTSTATUS set_policy(const UINT8 *blob, ULONG len, sqfw_set_policy_out *res)
{
    size_t need = 0;
    uint32_t off = 0;
    int rc = sqfw_policy_arena_size(blob, len, &need, &off);
    void *mem = NULL;
    sqfw_policy *p = NULL, *old = NULL;
    if (rc == SQFW_OK && need > SQFW_DRIVER_MAX_ARENA) {
        rc = SQFW_E_LIMIT; /* refused before the allocation, not by it */
        off = 0;
    }
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

/* A handle that completed the handshake carries this in its file object
 * (a device driver owns FsContext of the file objects opened on it). */
#define SQFW_HELLO_DONE ((PVOID)&g_sqfw)
/* ... and the one file object the exclusive open let in carries this in FsContext2 */
#define SQFW_OWNER ((PVOID)&g_sqfw.opened)

static void version_info(sqfw_version_info *v)
{
    v->abi_version = SQFW_ABI_VERSION;
    v->format_version = SQFW_FORMAT_VERSION;
    v->driver_major = 1;
    v->driver_minor = 0;
    v->interface_version = SQFW_INTERFACE_VERSION;
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

    PFILE_OBJECT file = sp->FileObject;
    if (code != IOCTL_SQFW_GET_VERSION && code != IOCTL_SQFW_HELLO && (!file || file->FsContext != SQFW_HELLO_DONE)) {
        /* a caller that does not know this interface must not get to read
         * or write structures it may lay out differently */
        st = STATUS_INVALID_DEVICE_STATE;
        code = 0;
    }

    switch (code) {
    case 0:
        break;
    case IOCTL_SQFW_GET_VERSION:
        if (out_len < sizeof(sqfw_version_info)) {
            st = STATUS_BUFFER_TOO_SMALL;
            break;
        }
        version_info(buf);
        info = sizeof(sqfw_version_info);
        st = STATUS_SUCCESS;
        break;
    case IOCTL_SQFW_HELLO: {
        if (!file || file->FsContext2 != SQFW_OWNER) {
            st = STATUS_ACCESS_DENIED;
            break;
        }
        if (in_len < sizeof(sqfw_hello_in) || out_len < sizeof(sqfw_version_info)) {
            st = STATUS_INVALID_PARAMETER;
            break;
        }
        sqfw_hello_in h;
        sq_copy(&h, buf, sizeof h);
        if (h.magic != SQFW_HELLO_MAGIC) {
            st = STATUS_INVALID_PARAMETER;
            break;
        }
        if (h.interface_version != SQFW_INTERFACE_VERSION) {
            /* the handle stays refused; GET_VERSION tells the caller what this driver speaks */
            file->FsContext = NULL;
            st = STATUS_REVISION_MISMATCH;
            break;
        }
        file->FsContext = SQFW_HELLO_DONE;
        version_info(buf);
        info = sizeof(sqfw_version_info);
        st = STATUS_SUCCESS;
        break;
    }
    case IOCTL_SQFW_SET_POLICY: {
        /* the cap comes before any allocation of the driver's own */
        if (in_len < SQFW_HDR_SIZE || in_len > SQFW_DRIVER_MAX_POLICY || out_len < sizeof(sqfw_set_policy_out)) {
            st = STATUS_INVALID_PARAMETER;
            break;
        }
        sqfw_set_policy_out res;
        set_policy(buf, in_len, &res);
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

/* The I/O manager already refuses a second open of an exclusive device; the
 * count makes the driver refuse it on a host that ignores the flag as well.
 * Wine 8.0 even hands out a handle whose create the driver failed, so the
 * owner's file object is marked and only it may say hello or release the
 * count. */

static NTSTATUS NTAPI dispatch_create(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    PFILE_OBJECT file = IoGetCurrentIrpStackLocation(irp)->FileObject;
    NTSTATUS st = STATUS_ACCESS_DENIED;
    if (file && InterlockedCompareExchange(&g_sqfw.opened, 1, 0) == 0) {
        file->FsContext = NULL;
        file->FsContext2 = SQFW_OWNER;
        st = STATUS_SUCCESS;
    }
    irp->IoStatus.Status = st;
    irp->IoStatus.Information = 0;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return st;
}

static NTSTATUS NTAPI dispatch_close(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    PFILE_OBJECT file = IoGetCurrentIrpStackLocation(irp)->FileObject;
    if (file && file->FsContext2 == SQFW_OWNER) {
        file->FsContext2 = NULL;
        InterlockedExchange(&g_sqfw.opened, 0);
    }
    irp->IoStatus.Status = STATUS_SUCCESS;
    irp->IoStatus.Information = 0;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return STATUS_SUCCESS;
}

/* SYSTEM and Administrators only, as D:P(A;;FA;;;SY)(A;;FA;;;BA): the event
 * channel names every process that connects, and the write codes decide
 * what may connect. IoCreateDeviceSecure is a static library of the WDK
 * (wdmsec.lib) that mingw does not have, and ntoskrnl does not export it on
 * Windows, so the DACL is built here and applied through the object
 * manager. The device still has DO_DEVICE_INITIALIZING set, so nothing can
 * open it before this runs. */
static NTSTATUS secure_device(PDEVICE_OBJECT dev)
{
    static const UCHAR sid_system[12] __attribute__((aligned(4))) = {1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0};
    static const UCHAR sid_admins[16] __attribute__((aligned(4))) = {1, 2, 0, 0, 0, 0, 0, 5,
                                                                     32, 0, 0, 0, 0x20, 2, 0, 0};
    /* ACL header 8 + two ACCESS_ALLOWED_ACEs (8 + SID each) = 52 bytes */
    ULONG64 acl_buf[8];
    ULONG64 sd_buf[8]; /* an absolute SECURITY_DESCRIPTOR is 40 bytes on x64 */
    PACL acl = (PACL)acl_buf;
    _Static_assert(sizeof acl_buf >= 8 + (8 + sizeof sid_system) + (8 + sizeof sid_admins), "ACL buffer");
    NTSTATUS st = RtlCreateAcl(acl, sizeof acl_buf, ACL_REVISION);
    if (NT_SUCCESS(st))
        st = RtlAddAccessAllowedAce(acl, ACL_REVISION, FILE_ALL_ACCESS, (PSID)sid_system);
    if (NT_SUCCESS(st))
        st = RtlAddAccessAllowedAce(acl, ACL_REVISION, FILE_ALL_ACCESS, (PSID)sid_admins);
    if (NT_SUCCESS(st))
        st = RtlCreateSecurityDescriptor(sd_buf, SECURITY_DESCRIPTOR_REVISION);
    if (NT_SUCCESS(st))
        st = RtlSetDaclSecurityDescriptor(sd_buf, TRUE, acl, FALSE);
    HANDLE h = NULL;
    if (NT_SUCCESS(st))
        st = ObOpenObjectByPointer(dev, OBJ_KERNEL_HANDLE, NULL, WRITE_DAC, NULL, KernelMode, &h);
    if (NT_SUCCESS(st)) {
        /* PROTECTED: nothing inherited from \Device widens it */
        st = ZwSetSecurityObject(h, DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION, sd_buf);
        ZwClose(h);
    }
    return st;
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
    /* exclusive: one agent owns the event channel and the policy */
    NTSTATUS st = IoCreateDevice(driver, 0, &name, FILE_DEVICE_NETWORK, FILE_DEVICE_SECURE_OPEN, TRUE,
                                 &g_sqfw.device);
    if (NT_SUCCESS(st))
        st = secure_device(g_sqfw.device);
    if (NT_SUCCESS(st))
        st = IoCreateSymbolicLink(&dos, &name);
    driver->MajorFunction[IRP_MJ_CREATE] = dispatch_create;
    driver->MajorFunction[IRP_MJ_CLOSE] = dispatch_close;
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
