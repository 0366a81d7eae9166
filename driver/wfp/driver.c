/* DriverEntry, unload and the IOCTL surface. Policies are validated and
 * compiled into a fresh NonPagedPoolNx arena outside the lock, then swapped
 * in under it, so classification never sees a half-built policy. */
#include "glue.h"

#include "../core/boot_rules.h"

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
    /* open connections are judged again under the new policy; if WFP
     * refuses, the policy still applies to every new connection */
    if (rc == SQFW_OK && !NT_SUCCESS(sqfw_callouts_reauthorize()))
        InterlockedIncrement(&g_sqfw.reauth_failures);
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

/* One IOCTL request as the handlers see it. The buffer is METHOD_BUFFERED's
 * system buffer: input and output share it, so a handler reads all of its
 * input before it writes any output. */
typedef struct sqfw_ioctl_req {
    PIRP irp;
    PFILE_OBJECT file;
    void *buf;
    ULONG in_len;
    ULONG out_len;
    ULONG info; /* bytes returned on completion */
} sqfw_ioctl_req;

typedef NTSTATUS (*sqfw_ioctl_fn)(sqfw_ioctl_req *rq);

static NTSTATUS ioctl_get_version(sqfw_ioctl_req *rq)
{
    version_info(rq->buf);
    rq->info = sizeof(sqfw_version_info);
    return STATUS_SUCCESS;
}

static NTSTATUS ioctl_hello(sqfw_ioctl_req *rq)
{
    sqfw_hello_in h;
    sq_copy(&h, rq->buf, sizeof h);
    if (h.magic != SQFW_HELLO_MAGIC)
        return STATUS_INVALID_PARAMETER;
    if (h.interface_version != SQFW_INTERFACE_VERSION) {
        /* the handle stays refused; GET_VERSION tells the caller what this driver speaks */
        rq->file->FsContext = NULL;
        return STATUS_REVISION_MISMATCH;
    }
    rq->file->FsContext = SQFW_HELLO_DONE;
    version_info(rq->buf);
    rq->info = sizeof(sqfw_version_info);
    return STATUS_SUCCESS;
}

static NTSTATUS ioctl_set_policy(sqfw_ioctl_req *rq)
{
    sqfw_set_policy_out res;
    set_policy(rq->buf, rq->in_len, &res);
    sq_copy(rq->buf, &res, sizeof res);
    rq->info = sizeof res;
    return STATUS_SUCCESS; /* the verdict is in res.status */
}

static NTSTATUS ioctl_get_stats(sqfw_ioctl_req *rq)
{
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    sqfw_get_stats(g_sqfw.engine, (sqfw_stats *)rq->buf);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    rq->info = sizeof(sqfw_stats);
    return STATUS_SUCCESS;
}

static NTSTATUS ioctl_set_level(sqfw_ioctl_req *rq)
{
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    int rc = sqfw_set_level(g_sqfw.engine, *(const UINT32 *)rq->buf, sqfw_now_ns());
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    return rc == SQFW_OK ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

static NTSTATUS ioctl_attest(sqfw_ioctl_req *rq)
{
    sqfw_attest_in a;
    KIRQL irql;
    sq_copy(&a, rq->buf, sizeof a);
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    int rc = sqfw_attest(g_sqfw.engine, a.process_key, a.sha256, sqfw_now_ns());
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    KeSetEvent(&g_sqfw.kick, 0, FALSE); /* complete the pended connects now */
    return rc == SQFW_OK ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

static NTSTATUS ioctl_bind_service(sqfw_ioctl_req *rq)
{
    sqfw_bind_in b;
    KIRQL irql;
    sq_copy(&b, rq->buf, sizeof b);
    if (b.name_len > sizeof b.name)
        return STATUS_INVALID_PARAMETER;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    int rc = sqfw_service_bind(g_sqfw.engine, b.process_key, b.name, b.name_len);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    return rc == SQFW_OK ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

static NTSTATUS ioctl_boot_filters(sqfw_ioctl_req *rq)
{
    UINT32 enable = 0;
    if (!sqfw_boot_request_check(rq->buf, rq->in_len, &enable))
        return STATUS_INVALID_PARAMETER;
    sqfw_boot_filters_out out;
    sqfw_boot_filters_set(enable, &out);
    sq_copy(rq->buf, &out, sizeof out);
    rq->info = sizeof out;
    return STATUS_SUCCESS; /* the outcome is in out.status */
}

static NTSTATUS ioctl_wait_events(sqfw_ioctl_req *rq)
{
    NTSTATUS st = sqfw_events_wait(rq->irp);
    if (st != STATUS_PENDING)
        rq->info = (ULONG)rq->irp->IoStatus.Information;
    return st;
}

typedef struct sqfw_ioctl_entry {
    ULONG code;
    ULONG min_in;
    ULONG max_in; /* 0: no cap */
    ULONG min_out;
    /* what a buffer outside those bounds gets: the read-only codes have
     * always answered BUFFER_TOO_SMALL, the others INVALID_PARAMETER, and
     * callers key on the difference */
    NTSTATUS bad_len;
    /* HELLO is the owner's alone and is refused to anyone else before its
     * buffers are looked at, so a stranger learns nothing about them */
    BOOLEAN owner_only;
    /* every code but the two that negotiate the interface: a caller that
     * does not know this interface must not get to read or write
     * structures it may lay out differently */
    BOOLEAN needs_hello;
    sqfw_ioctl_fn fn;
} sqfw_ioctl_entry;

static const sqfw_ioctl_entry ioctl_table[] = {
    {IOCTL_SQFW_GET_VERSION, 0, 0, sizeof(sqfw_version_info), STATUS_BUFFER_TOO_SMALL, FALSE, FALSE,
     ioctl_get_version},
    {IOCTL_SQFW_HELLO, sizeof(sqfw_hello_in), 0, sizeof(sqfw_version_info), STATUS_INVALID_PARAMETER, TRUE, FALSE,
     ioctl_hello},
    /* the cap comes before any allocation of the driver's own */
    {IOCTL_SQFW_SET_POLICY, SQFW_HDR_SIZE, SQFW_DRIVER_MAX_POLICY, sizeof(sqfw_set_policy_out),
     STATUS_INVALID_PARAMETER, FALSE, TRUE, ioctl_set_policy},
    {IOCTL_SQFW_GET_STATS, 0, 0, sizeof(sqfw_stats), STATUS_BUFFER_TOO_SMALL, FALSE, TRUE, ioctl_get_stats},
    {IOCTL_SQFW_SET_LEVEL, sizeof(UINT32), 0, 0, STATUS_INVALID_PARAMETER, FALSE, TRUE, ioctl_set_level},
    {IOCTL_SQFW_ATTEST, sizeof(sqfw_attest_in), 0, 0, STATUS_INVALID_PARAMETER, FALSE, TRUE, ioctl_attest},
    {IOCTL_SQFW_BIND_SERVICE, sizeof(sqfw_bind_in), 0, 0, STATUS_INVALID_PARAMETER, FALSE, TRUE,
     ioctl_bind_service},
    {IOCTL_SQFW_SET_BOOT_FILTERS, sizeof(sqfw_boot_filters_in), sizeof(sqfw_boot_filters_in),
     sizeof(sqfw_boot_filters_out), STATUS_INVALID_PARAMETER, FALSE, TRUE, ioctl_boot_filters},
    /* room for at least one event: nothing is dequeued into a buffer that cannot take it */
    {IOCTL_SQFW_WAIT_EVENTS, 0, 0, sizeof(sqfw_event), STATUS_BUFFER_TOO_SMALL, FALSE, TRUE, ioctl_wait_events},
};

static const sqfw_ioctl_entry *ioctl_find(ULONG code)
{
    for (size_t i = 0; i < sizeof ioctl_table / sizeof ioctl_table[0]; i++)
        if (ioctl_table[i].code == code)
            return &ioctl_table[i];
    return NULL;
}

/* The order of the checks is part of the interface: an unknown code on a
 * handle without the handshake is refused for the handshake, not as
 * unknown; HELLO's owner check precedes its length check. */
static NTSTATUS ioctl_check(const sqfw_ioctl_entry *e, const sqfw_ioctl_req *rq)
{
    PFILE_OBJECT file = rq->file;
    if ((!e || e->needs_hello) && (!file || file->FsContext != SQFW_HELLO_DONE))
        return STATUS_INVALID_DEVICE_STATE;
    if (!e)
        return STATUS_INVALID_DEVICE_REQUEST;
    if (e->owner_only && (!file || file->FsContext2 != SQFW_OWNER))
        return STATUS_ACCESS_DENIED;
    if (rq->in_len < e->min_in || (e->max_in && rq->in_len > e->max_in) || rq->out_len < e->min_out)
        return e->bad_len;
    return STATUS_SUCCESS;
}

/* Every request this driver finishes at once ends the same way. */
static NTSTATUS complete_irp(PIRP irp, NTSTATUS st, ULONG_PTR info)
{
    irp->IoStatus.Status = st;
    irp->IoStatus.Information = info;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return st;
}

static NTSTATUS NTAPI dispatch_ioctl(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    PIO_STACK_LOCATION sp = IoGetCurrentIrpStackLocation(irp);
    const sqfw_ioctl_entry *e = ioctl_find(sp->Parameters.DeviceIoControl.IoControlCode);
    sqfw_ioctl_req rq = {
        .irp = irp,
        .file = sp->FileObject,
        .buf = irp->AssociatedIrp.SystemBuffer,
        .in_len = sp->Parameters.DeviceIoControl.InputBufferLength,
        .out_len = sp->Parameters.DeviceIoControl.OutputBufferLength,
        .info = 0,
    };
    NTSTATUS st = ioctl_check(e, &rq);
    if (NT_SUCCESS(st)) {
        st = e->fn(&rq);
        if (st == STATUS_PENDING)
            return st; /* owned by the cancel-safe queue now */
    }
    return complete_irp(irp, st, rq.info);
}

/* The last handle to a file object is going: its waiting event requests
 * must not outlive it. */
static NTSTATUS NTAPI dispatch_cleanup(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    sqfw_events_cancel_file(IoGetCurrentIrpStackLocation(irp)->FileObject);
    return complete_irp(irp, STATUS_SUCCESS, 0);
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
    return complete_irp(irp, st, 0);
}

static NTSTATUS NTAPI dispatch_close(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    PFILE_OBJECT file = IoGetCurrentIrpStackLocation(irp)->FileObject;
    if (file && file->FsContext2 == SQFW_OWNER) {
        file->FsContext2 = NULL;
        InterlockedExchange(&g_sqfw.opened, 0);
    }
    return complete_irp(irp, STATUS_SUCCESS, 0);
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
    sqfw_bfe_stop();
    sqfw_processes_stop();
    sqfw_callouts_detach();
    sqfw_shaper_stop_worker();
    sqfw_pends_release();
    sqfw_callouts_unregister();
    sqfw_shaper_release();
    sqfw_events_cancel_all();
    sqfw_etw_stop();
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
    KeInitializeEvent(&g_sqfw.session_lock, SynchronizationEvent, TRUE);
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
    lim.max_processes = 4096;
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
    sqfw_etw_start();

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
        st = sqfw_processes_start();
    if (NT_SUCCESS(st))
        st = sqfw_shaper_start();
    if (NT_SUCCESS(st))
        st = sqfw_callouts_register(g_sqfw.device);
    if (NT_SUCCESS(st))
        st = sqfw_bfe_start(g_sqfw.device);
    if (!NT_SUCCESS(st))
        teardown(driver);
    return st;
}
