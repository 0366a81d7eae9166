/* TEST ONLY, never shipped: a stand-in for fwpkclnt.sys so that the real
 * sieveqfw.sys loads in Wine's user-mode ntoskrnl (Wine 8.0 has no WFP).
 *
 * It records every registration, callout, filter, flow context, pend,
 * clone and injection; answers the harness's IOCTL_STANDIN_* codes on the
 * driver's device (it wraps the driver's device-control dispatch when the
 * first callout is registered) so the harness can call the recorded classify
 * functions with constructed values; and, when the driver is unloaded,
 * appends one line of balances to C:\sqfw-standin.log.
 *
 * It also supplies what Wine 8.0 lacks, by patching the driver's import
 * table at load time (the .sys file is unchanged): IoCsqInitialize (a no-op
 * in Wine), IoCsqInsertIrp and IoCsqRemoveNextIrp (stubs that crash),
 * PsGetProcessCreateTimeQuadPart (a crashing stub; here 0, so a process key
 * is the pid), NdisRetreat/AdvanceNetBufferDataStart (absent from Wine's
 * ndis.sys; here they move the stand-in's own NET_BUFFERs), and it counts the
 * driver's pool allocations with its tag. */
#include "../wfp/include/wfp_decls.h"
#include <csq.h>

#include "standin_ioctl.h"
#include "standin_boot.h"
#include "standin_etw.h"
/* standin_etw.c: the ETW recorders */
void standin_etw_patch(UINT8 *base, void *(*patch)(UINT8 *, const char *, const char *, void *));
LONG64 standin_etw_leak(char *text, ULONG cap);
int standin_etw_ioctl(ULONG code, void *buf, ULONG in_len, ULONG out_len, NTSTATUS *status, ULONG *info);
#include "standin_shaper.h"

/* kernel32, which winedevice.exe has loaded */
__declspec(dllimport) void *__stdcall GetModuleHandleA(const char *name);
__declspec(dllimport) int __stdcall VirtualProtect(void *addr, SIZE_T size, ULONG prot, ULONG *old);
__declspec(dllimport) void *__stdcall CreateFileA(const char *name, ULONG access, ULONG share, void *sa, ULONG disp,
                                                  ULONG flags, void *tmpl);
__declspec(dllimport) int __stdcall WriteFile(void *h, const void *buf, ULONG n, ULONG *written, void *ov);
__declspec(dllimport) int __stdcall CloseHandle(void *h);
__declspec(dllimport) ULONG __stdcall GetFileAttributesA(const char *name);
__declspec(dllimport) int __stdcall DeleteFileA(const char *name);
__declspec(dllimport) int __cdecl _snprintf(char *buf, size_t n, const char *fmt, ...);

#define SQFW_TAG 0x77665153u
#define LOG_PATH "C:\\sqfw-standin.log"
#define FAIL_REGISTER_FLAG "C:\\sqfw-fail-register" /* fail the 4th callout registration once */
#define BFE_STOPPED_FLAG "C:\\sqfw-bfe-stopped"     /* BFE not running when the driver loads */

static sq_counts cnt;
static int load_seen;  /* a driver registered since attach: a log line is owed */
static int line_done;

/* ---- recorded callouts and flow contexts ---- */
#define MAX_CALLOUTS 16
static struct {
    FWPS_CALLOUT0 c;
    UINT32 id;
    int live;
    int had_context; /* WFP answers busy while a flow-delete may still be running: emulated once */
} callouts[MAX_CALLOUTS];
static UINT32 n_callouts;

#define MAX_CTX 256
static struct {
    UINT64 flow;
    UINT16 layer;
    UINT32 callout;
    UINT64 ctx;
    int live;
} ctxs[MAX_CTX];

/* filter ids handed out, so a delete of an id never given is seen */
#define MAX_FILTERS 64
static UINT64 filter_live[MAX_FILTERS];
static UINT64 next_filter_id = 0x100;

static PDRIVER_DISPATCH orig_ioctl, orig_cleanup, orig_create, orig_close;
static PDRIVER_UNLOAD orig_unload;

/* ---- stand-in NET_BUFFER_LISTs ---- */
#define NBL_MAGIC 0x5153424eu
typedef struct fake_nbl {
    NET_BUFFER_LIST nbl;
    NET_BUFFER nb;
    UINT32 magic;
    UINT32 created_offset;
    UINT8 injected;
    UINT8 is_clone;
} fake_nbl;

static fake_nbl *as_fake(const NET_BUFFER_LIST *nbl)
{
    fake_nbl *f = (fake_nbl *)nbl;
    return f && f->magic == NBL_MAGIC ? f : NULL;
}

static fake_nbl *new_nbl(UINT32 offset, UINT32 len)
{
    fake_nbl *f = ExAllocatePoolWithTag(NonPagedPoolNx, sizeof *f, 'tsQS');
    if (!f)
        return NULL;
    RtlZeroMemory(f, sizeof *f);
    f->magic = NBL_MAGIC;
    f->nbl.FirstNetBuffer = &f->nb;
    f->nb.DataOffset = offset;
    f->nb.DataLength = len;
    f->created_offset = offset;
    return f;
}

/* ---- log ---- */
static void log_line(const char *s)
{
    void *h = CreateFileA(LOG_PATH, 4 /* FILE_APPEND_DATA */, 3, NULL, 4 /* OPEN_ALWAYS */, 0x80, NULL);
    if (h == (void *)(LONG_PTR)-1)
        return;
    ULONG n = 0, w = 0;
    while (s[n])
        n++;
    WriteFile(h, s, n, &w, NULL);
    CloseHandle(h);
}

static void write_balances(const char *when)
{
    if (!load_seen || line_done)
        return;
    line_done = 1;
    char buf[512];
    LONG64 leak = (LONG64)(cnt.callouts_registered - cnt.callouts_unregistered) +
                  (LONG64)(cnt.engine_open - cnt.engine_close) + (LONG64)(cnt.flow_associated - cnt.flow_removed) +
                  (LONG64)(cnt.pended - cnt.completed) + (LONG64)(cnt.clones - cnt.clones_freed) +
                  (LONG64)(cnt.injection_handles - cnt.injection_handles_destroyed) +
                  (LONG64)(cnt.pool_allocs - cnt.pool_frees) +
                  (LONG64)(cnt.process_notify_set - cnt.process_notify_removed) +
                  (LONG64)(cnt.bfe_subscribed - cnt.bfe_unsubscribed);
    char etw[64];
    leak += standin_etw_leak(etw, sizeof etw);
    _snprintf(buf, sizeof buf,
              "%s registered=%llu unregistered=%llu busy=%llu engine=%llu/%llu flows=%llu/%llu deleted=%llu "
              "pends=%llu/%llu clones=%llu/%llu injh=%llu/%llu pool=%llu/%llu pnotify=%llu/%llu bfe=%llu/%llu %s leak=%lld\r\n",
              when, cnt.callouts_registered, cnt.callouts_unregistered, cnt.unregister_busy, cnt.engine_open,
              cnt.engine_close, cnt.flow_associated, cnt.flow_removed, cnt.flow_delete_calls, cnt.pended,
              cnt.completed, cnt.clones, cnt.clones_freed, cnt.injection_handles, cnt.injection_handles_destroyed,
              cnt.pool_allocs, cnt.pool_frees, cnt.process_notify_set, cnt.process_notify_removed,
              cnt.bfe_subscribed, cnt.bfe_unsubscribed, etw, leak);
    log_line(buf);
}

/* ---- what Wine 8.0 lacks ---- */
static void NTAPI csq_cancel_routine(PDEVICE_OBJECT dev, PIRP irp)
{
    (void)dev;
    IoReleaseCancelSpinLock(irp->CancelIrql);
    PIO_CSQ csq = irp->Tail.Overlay.DriverContext[3];
    KIRQL irql;
    csq->CsqAcquireLock(csq, &irql);
    csq->CsqRemoveIrp(csq, irp);
    irp->Tail.Overlay.DriverContext[3] = NULL;
    csq->CsqReleaseLock(csq, irql);
    csq->CsqCompleteCanceledIrp(csq, irp);
}

static NTSTATUS NTAPI my_IoCsqInitialize(PIO_CSQ csq, PIO_CSQ_INSERT_IRP ins, PIO_CSQ_REMOVE_IRP rem,
                                         PIO_CSQ_PEEK_NEXT_IRP peek, PIO_CSQ_ACQUIRE_LOCK acq,
                                         PIO_CSQ_RELEASE_LOCK rel, PIO_CSQ_COMPLETE_CANCELED_IRP done)
{
    csq->Type = IO_TYPE_CSQ;
    csq->CsqInsertIrp = ins;
    csq->CsqRemoveIrp = rem;
    csq->CsqPeekNextIrp = peek;
    csq->CsqAcquireLock = acq;
    csq->CsqReleaseLock = rel;
    csq->CsqCompleteCanceledIrp = done;
    csq->ReservePointer = NULL;
    return STATUS_SUCCESS;
}

static NTSTATUS NTAPI my_IoCsqInsertIrp(PIO_CSQ csq, PIRP irp, PIO_CSQ_IRP_CONTEXT ctx)
{
    (void)ctx;
    KIRQL irql;
    csq->CsqAcquireLock(csq, &irql);
    irp->Tail.Overlay.DriverContext[3] = csq;
    IoMarkIrpPending(irp);
    csq->CsqInsertIrp(csq, irp);
    IoSetCancelRoutine(irp, csq_cancel_routine);
    if (irp->Cancel && IoSetCancelRoutine(irp, NULL)) {
        csq->CsqRemoveIrp(csq, irp);
        irp->Tail.Overlay.DriverContext[3] = NULL;
        csq->CsqReleaseLock(csq, irql);
        csq->CsqCompleteCanceledIrp(csq, irp);
        return STATUS_SUCCESS;
    }
    csq->CsqReleaseLock(csq, irql);
    return STATUS_SUCCESS;
}

static PIRP NTAPI my_IoCsqRemoveNextIrp(PIO_CSQ csq, PVOID peek_ctx)
{
    KIRQL irql;
    csq->CsqAcquireLock(csq, &irql);
    PIRP irp = csq->CsqPeekNextIrp(csq, NULL, peek_ctx);
    while (irp) {
        if (IoSetCancelRoutine(irp, NULL)) { /* else a cancel is completing it */
            csq->CsqRemoveIrp(csq, irp);
            irp->Tail.Overlay.DriverContext[3] = NULL;
            break;
        }
        irp = csq->CsqPeekNextIrp(csq, irp, peek_ctx);
    }
    csq->CsqReleaseLock(csq, irql);
    return irp;
}

static LONGLONG NTAPI my_PsGetProcessCreateTimeQuadPart(PEPROCESS p)
{
    (void)p;
    return 0;
}

static NDIS_STATUS NTAPI my_NdisRetreat(NET_BUFFER *nb, ULONG delta, ULONG backfill, void *alloc)
{
    (void)backfill, (void)alloc;
    if (nb->DataOffset < delta)
        return 0xC0000001; /* a real NIC buffer would need a new MDL; ours never does */
    nb->DataOffset -= delta;
    nb->DataLength += delta;
    return NDIS_STATUS_SUCCESS;
}

static void NTAPI my_NdisAdvance(NET_BUFFER *nb, ULONG delta, BOOLEAN free_mdl, void *free_fn)
{
    (void)free_mdl, (void)free_fn;
    nb->DataOffset += delta;
    nb->DataLength -= delta;
}

typedef PVOID(NTAPI *alloc_fn)(POOL_TYPE, SIZE_T, ULONG);
typedef VOID(NTAPI *free_fn)(PVOID, ULONG);
static alloc_fn real_alloc;
static free_fn real_free;

static PVOID NTAPI my_ExAllocatePoolWithTag(POOL_TYPE type, SIZE_T size, ULONG tag)
{
    PVOID p = real_alloc(type, size, tag);
    if (p && tag == SQFW_TAG)
        cnt.pool_allocs++;
    return p;
}

static VOID NTAPI my_ExFreePoolWithTag(PVOID p, ULONG tag)
{
    if (p && tag == SQFW_TAG)
        cnt.pool_frees++;
    real_free(p, tag);
}

/* Replaces one imported function in a module's import address table;
 * returns the previous pointer (NULL when not imported). */
static void *patch_import(UINT8 *base, const char *dll, const char *fn, void *repl)
{
    UINT32 nt = *(UINT32 *)(base + 0x3C);
    UINT8 *opt = base + nt + 24;
    UINT32 imp_rva = *(UINT32 *)(opt + 112 + 8); /* DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT] */
    if (!imp_rva)
        return NULL;
    for (UINT8 *d = base + imp_rva; *(UINT32 *)(d + 12); d += 20) {
        const char *name = (const char *)(base + *(UINT32 *)(d + 12));
        if (_stricmp(name, dll) != 0)
            continue;
        UINT64 *names = (UINT64 *)(base + (*(UINT32 *)d ? *(UINT32 *)d : *(UINT32 *)(d + 16)));
        UINT64 *iat = (UINT64 *)(base + *(UINT32 *)(d + 16));
        for (UINT32 i = 0; names[i]; i++) {
            if (names[i] >> 63)
                continue;
            if (strcmp((const char *)(base + (UINT32)names[i] + 2), fn) != 0)
                continue;
            void *old = (void *)iat[i];
            ULONG prot;
            VirtualProtect(&iat[i], sizeof iat[i], 0x04 /* PAGE_READWRITE */, &prot);
            iat[i] = (UINT64)repl;
            VirtualProtect(&iat[i], sizeof iat[i], prot, &prot);
            return old;
        }
    }
    return NULL;
}

/* Records the descriptor the driver puts on its device: Wine 8.0 accepts it
 * but neither reports it back through a handle nor enforces it. */
NTSYSAPI NTSTATUS NTAPI RtlAbsoluteToSelfRelativeSD(PSECURITY_DESCRIPTOR abs, PSECURITY_DESCRIPTOR rel, PULONG len);
typedef NTSTATUS(NTAPI *set_sd_fn)(HANDLE, SECURITY_INFORMATION, PSECURITY_DESCRIPTOR);
static set_sd_fn real_set_sd;
static NTSTATUS NTAPI my_ZwSetSecurityObject(HANDLE h, SECURITY_INFORMATION info, PSECURITY_DESCRIPTOR sd)
{
    ULONG len = sizeof cnt.sd;
    cnt.sd_sets++;
    cnt.sd_info = info;
    cnt.sd_len = NT_SUCCESS(RtlAbsoluteToSelfRelativeSD(sd, cnt.sd, &len)) ? len : 0;
    NTSTATUS st = real_set_sd(h, info, sd);
    cnt.sd_status = (UINT32)st;
    return st;
}

/* The process notify: recorded so the harness can report creates and exits
 * (Wine calls no driver's routine); the image name is the harness's. */
static PCREATE_PROCESS_NOTIFY_ROUTINE_EX process_notify;
static UNICODE_STRING *next_image;

static NTSTATUS NTAPI my_PsSetCreateProcessNotifyRoutineEx(PCREATE_PROCESS_NOTIFY_ROUTINE_EX fn, BOOLEAN remove)
{
    if (remove) {
        if (fn != process_notify)
            return STATUS_INVALID_PARAMETER;
        process_notify = NULL;
        cnt.process_notify_removed++;
        return STATUS_SUCCESS;
    }
    if (process_notify)
        return STATUS_INVALID_PARAMETER;
    process_notify = fn;
    cnt.process_notify_set++;
    return STATUS_SUCCESS;
}

static NTSTATUS NTAPI my_SeLocateProcessImageName(PEPROCESS p, PUNICODE_STRING *name)
{
    (void)p;
    if (!next_image)
        return STATUS_NOT_FOUND;
    *name = next_image; /* the driver frees it with ExFreePool */
    next_image = NULL;
    return STATUS_SUCCESS;
}

typedef NTSTATUS(NTAPI *query_name_fn)(PVOID, POBJECT_NAME_INFORMATION, ULONG, PULONG);
static query_name_fn real_query_name;
/* Wine 8.0's ObQueryNameString crashes on the file object of a file the
 * driver opened; Windows gives the NT device path (\Device\HarddiskVolumeN\...).
 * The stand-in answers in that form for file objects (counted, so the
 * harness says so) and passes every other object to Wine. */
static const WCHAR wine_svchost[] = L"\\Device\\HarddiskVolume1\\windows\\system32\\svchost.exe";
static PVOID opened_file; /* the object the driver referenced after opening svchost.exe */
typedef NTSTATUS(NTAPI *ref_fn)(HANDLE, ACCESS_MASK, POBJECT_TYPE, KPROCESSOR_MODE, PVOID *, void *);
static ref_fn real_ref;
static NTSTATUS NTAPI my_ObReferenceObjectByHandle(HANDLE h, ACCESS_MASK access, POBJECT_TYPE type, KPROCESSOR_MODE mode,
                                                   PVOID *obj, void *info)
{
    if (type != *IoFileObjectType)
        return real_ref(h, access, type, mode, obj, info);
    static UINT8 fake_file[256]; /* Wine 8.0 crashes referencing a file handle */
    opened_file = fake_file;
    *obj = fake_file;
    cnt.svchost_object_supplied = 1;
    return STATUS_SUCCESS;
}

typedef LONG_PTR(NTAPI *deref_fn)(PVOID);
static deref_fn real_deref;
static LONG_PTR NTAPI my_ObDereferenceObject(PVOID obj)
{
    if (obj && obj == opened_file)
        return 0;
    return real_deref(obj);
}

static NTSTATUS NTAPI my_ObQueryNameString(PVOID obj, POBJECT_NAME_INFORMATION info, ULONG len, PULONG got)
{
    if (obj != opened_file || !opened_file)
        return real_query_name(obj, info, len, got);
    if (len < sizeof *info + sizeof wine_svchost)
        return STATUS_INFO_LENGTH_MISMATCH;
    info->Name.Buffer = (PWSTR)(info + 1);
    RtlCopyMemory(info->Name.Buffer, wine_svchost, sizeof wine_svchost);
    info->Name.Length = sizeof wine_svchost - sizeof(WCHAR);
    info->Name.MaximumLength = sizeof wine_svchost;
    *got = sizeof *info + sizeof wine_svchost;
    cnt.svchost_name_supplied = 1;
    RtlCopyMemory(cnt.svchost_name, wine_svchost, sizeof wine_svchost - sizeof(WCHAR));
    cnt.svchost_name_bytes = sizeof wine_svchost - sizeof(WCHAR);
    return STATUS_SUCCESS;
}

typedef NTSTATUS(NTAPI *open_file_fn)(PHANDLE, ACCESS_MASK, POBJECT_ATTRIBUTES, PIO_STATUS_BLOCK, ULONG, ULONG);
static open_file_fn real_open_file;
static NTSTATUS NTAPI my_ZwOpenFile(PHANDLE h, ACCESS_MASK access, POBJECT_ATTRIBUTES oa, PIO_STATUS_BLOCK io,
                                    ULONG share, ULONG options)
{
    NTSTATUS st = real_open_file(h, access, oa, io, share, options);
    cnt.svchost_open_status = (UINT32)st;
    /* Wine 8.0 has no \SystemRoot link: retry through the drive letter it maps to */
    static const WCHAR root[] = L"\\SystemRoot\\";
    const USHORT root_bytes = sizeof root - sizeof(WCHAR);
    UNICODE_STRING *n = oa ? oa->ObjectName : NULL;
    if (st == (NTSTATUS)0xC000003A && n && n->Length > root_bytes && n->Length < 400 &&
        RtlCompareMemory(n->Buffer, root, root_bytes) == root_bytes) {
        static WCHAR buf[260];
        static const WCHAR dos[] = L"\\??\\C:\\windows\\";
        USHORT dos_bytes = sizeof dos - sizeof(WCHAR);
        RtlCopyMemory(buf, dos, dos_bytes);
        RtlCopyMemory((UINT8 *)buf + dos_bytes, (UINT8 *)n->Buffer + root_bytes, n->Length - root_bytes);
        UNICODE_STRING alt = {(USHORT)(dos_bytes + n->Length - root_bytes), sizeof buf, buf};
        OBJECT_ATTRIBUTES oa2 = *oa;
        oa2.ObjectName = &alt;
        st = real_open_file(h, access, &oa2, io, share, options);
        cnt.svchost_open_status = (UINT32)st;
        cnt.svchost_root_supplied = 1;
    }
    return st;
}

static NTSTATUS run_process(const sq_process_in *pi)
{
    if (!process_notify || pi->image_bytes > sizeof pi->image || pi->cmdline_bytes > sizeof pi->cmdline)
        return STATUS_INVALID_DEVICE_STATE;
    static UINT8 fake_eprocess[64]; /* never dereferenced: the creation time is patched */
    cnt.process_notify_calls++;
    if (!pi->create) {
        process_notify((PEPROCESS)fake_eprocess, (HANDLE)(ULONG_PTR)pi->pid, NULL);
        return STATUS_SUCCESS;
    }
    UNICODE_STRING *img = ExAllocatePool(PagedPool, sizeof *img + sizeof pi->image);
    if (!img)
        return STATUS_INSUFFICIENT_RESOURCES;
    img->Buffer = (PWSTR)(img + 1);
    RtlCopyMemory(img->Buffer, pi->image, pi->image_bytes);
    img->Length = img->MaximumLength = (USHORT)pi->image_bytes;
    next_image = img;
    static WCHAR cmd_buf[260];
    static UNICODE_STRING cmd;
    RtlCopyMemory(cmd_buf, pi->cmdline, pi->cmdline_bytes);
    cmd.Buffer = cmd_buf;
    cmd.Length = cmd.MaximumLength = (USHORT)pi->cmdline_bytes;
    PS_CREATE_NOTIFY_INFO info;
    RtlZeroMemory(&info, sizeof info);
    info.Size = sizeof info;
    info.CommandLine = &cmd;
    process_notify((PEPROCESS)fake_eprocess, (HANDLE)(ULONG_PTR)pi->pid, &info);
    if (next_image) { /* the driver did not ask */
        ExFreePool(next_image);
        next_image = NULL;
    }
    return STATUS_SUCCESS;
}

static void patch_driver(void)
{
    UINT8 *base = GetModuleHandleA("sieveqfw.sys");
    if (!base)
        return;
    patch_import(base, "ntoskrnl.exe", "IoCsqInitialize", (void *)my_IoCsqInitialize);
    patch_import(base, "ntoskrnl.exe", "IoCsqInsertIrp", (void *)my_IoCsqInsertIrp);
    patch_import(base, "ntoskrnl.exe", "IoCsqRemoveNextIrp", (void *)my_IoCsqRemoveNextIrp);
    patch_import(base, "ntoskrnl.exe", "PsGetProcessCreateTimeQuadPart", (void *)my_PsGetProcessCreateTimeQuadPart);
    patch_import(base, "ntoskrnl.exe", "PsSetCreateProcessNotifyRoutineEx", (void *)my_PsSetCreateProcessNotifyRoutineEx);
    patch_import(base, "ntoskrnl.exe", "SeLocateProcessImageName", (void *)my_SeLocateProcessImageName);
    void *q = patch_import(base, "ntoskrnl.exe", "ObQueryNameString", (void *)my_ObQueryNameString);
    real_query_name = q ? (query_name_fn)q : ObQueryNameString;
    void *o = patch_import(base, "ntoskrnl.exe", "ZwOpenFile", (void *)my_ZwOpenFile);
    void *r = patch_import(base, "ntoskrnl.exe", "ObReferenceObjectByHandle", (void *)my_ObReferenceObjectByHandle);
    real_ref = r ? (ref_fn)r : (ref_fn)ObReferenceObjectByHandle;
    void *d = patch_import(base, "ntoskrnl.exe", "ObfDereferenceObject", (void *)my_ObDereferenceObject);
    real_deref = d ? (deref_fn)d : ObfDereferenceObject;
    real_open_file = o ? (open_file_fn)o : ZwOpenFile;
    patch_import(base, "ndis.sys", "NdisRetreatNetBufferDataStart", (void *)my_NdisRetreat);
    patch_import(base, "ndis.sys", "NdisAdvanceNetBufferDataStart", (void *)my_NdisAdvance);
    void *z = patch_import(base, "ntoskrnl.exe", "ZwSetSecurityObject", (void *)my_ZwSetSecurityObject);
    real_set_sd = z ? (set_sd_fn)z : ZwSetSecurityObject;
    void *a = patch_import(base, "ntoskrnl.exe", "ExAllocatePoolWithTag", (void *)my_ExAllocatePoolWithTag);
    void *f = patch_import(base, "ntoskrnl.exe", "ExFreePoolWithTag", (void *)my_ExFreePoolWithTag);
    real_alloc = a ? (alloc_fn)a : ExAllocatePoolWithTag;
    real_free = f ? (free_fn)f : ExFreePoolWithTag;
    standin_etw_patch(base, patch_import);
}

/* ---- harness requests on the driver's device ---- */
static void set_u8(FWPS_INCOMING_VALUE0 *v, UINT32 i, UINT8 x)
{
    v[i].value.type = FWP_UINT8;
    v[i].value.uint8 = x;
}
static void set_u16(FWPS_INCOMING_VALUE0 *v, UINT32 i, UINT16 x)
{
    v[i].value.type = FWP_UINT16;
    v[i].value.uint16 = x;
}
static void set_u32(FWPS_INCOMING_VALUE0 *v, UINT32 i, UINT32 x)
{
    v[i].value.type = FWP_UINT32;
    v[i].value.uint32 = x;
}

/* Per-layer positions, written as the documented numbers (fwpsk.h
 * FWPS_FIELDS_ALE_*_V4/_V6 enumerations, each _V6 row read from its own
 * page: they equal the _V4 ones), independent of the driver's own table.
 * 0xFF: the layer has no such field. */
typedef struct ale_field_row {
    UINT32 layer;
    UINT8 v6, local, local_port, protocol, remote, remote_port, flags, direction, if_index, sub_if_index;
} ale_field_row;
static const ale_field_row ale_fields[] = {
    {48 /* ALE_AUTH_CONNECT_V4 */, 0, 2, 4, 5, 6, 7, 12, 0xFF, 0xFF, 0xFF},
    {50 /* ALE_AUTH_CONNECT_V6 */, 1, 2, 4, 5, 6, 7, 12, 0xFF, 0xFF, 0xFF},
    {44 /* ALE_AUTH_RECV_ACCEPT_V4 */, 0, 2, 4, 5, 6, 7, 11, 0xFF, 16, 17},
    {46 /* ALE_AUTH_RECV_ACCEPT_V6 */, 1, 2, 4, 5, 6, 7, 11, 0xFF, 16, 17},
    {52 /* ALE_FLOW_ESTABLISHED_V4 */, 0, 2, 4, 5, 6, 7, 15, 12, 0xFF, 0xFF},
    {54 /* ALE_FLOW_ESTABLISHED_V6 */, 1, 2, 4, 5, 6, 7, 15, 12, 0xFF, 0xFF},
};

static NTSTATUS run_classify(const sq_classify_in *ci, sq_classify_out *co)
{
    if (ci->callout >= n_callouts || ci->path_bytes > sizeof ci->path)
        return STATUS_INVALID_PARAMETER;
    UINT32 row = 0;
    while (row < sizeof ale_fields / sizeof ale_fields[0] && ale_fields[row].layer != ci->layer_id)
        row++;
    if (row == sizeof ale_fields / sizeof ale_fields[0])
        return STATUS_INVALID_PARAMETER;
    static FWPS_INCOMING_VALUE0 vals[48];
    static FWP_BYTE_BLOB path;
    static UINT16 path_buf[261];
    static FWP_BYTE_ARRAY16 a6[2]; /* local, remote: WFP passes v6 addresses by pointer */
    RtlZeroMemory(vals, sizeof vals);
    RtlCopyMemory(path_buf, ci->path, ci->path_bytes);
    path_buf[ci->path_bytes / 2] = 0;
    path.size = ci->path_bytes + 2;
    path.data = (UINT8 *)path_buf;
    FWPS_INCOMING_VALUES0 in;
    in.layerId = (UINT16)ci->layer_id;
    in.valueCount = 40;
    in.incomingValue = vals;
    UINT32 flags = ci->reauth ? FWP_CONDITION_FLAG_IS_REAUTHORIZE : 0;
    const ale_field_row *f = &ale_fields[row];
    if (f->v6) {
        RtlCopyMemory(a6[0].byteArray16, ci->local_addr6, 16);
        RtlCopyMemory(a6[1].byteArray16, ci->remote_addr6, 16);
        vals[f->local].value.type = FWP_BYTE_ARRAY16_TYPE;
        vals[f->local].value.byteArray16 = &a6[0];
        vals[f->remote].value.type = FWP_BYTE_ARRAY16_TYPE;
        vals[f->remote].value.byteArray16 = &a6[1];
    } else {
        set_u32(vals, f->local, ci->local_addr);
        set_u32(vals, f->remote, ci->remote_addr);
    }
    set_u16(vals, f->local_port, ci->local_port), set_u8(vals, f->protocol, ci->protocol);
    set_u16(vals, f->remote_port, ci->remote_port), set_u32(vals, f->flags, flags);
    if (f->direction != 0xFF)
        set_u32(vals, f->direction, ci->direction);
    if (f->if_index != 0xFF)
        set_u32(vals, f->if_index, ci->if_index), set_u32(vals, f->sub_if_index, ci->sub_if_index);
    static UINT32 next_completion = 0x5000;
    FWPS_INCOMING_METADATA_VALUES0 meta;
    RtlZeroMemory(&meta, sizeof meta);
    meta.currentMetadataValues = FWPS_METADATA_FIELD_PROCESS_ID | FWPS_METADATA_FIELD_PROCESS_PATH |
                                 FWPS_METADATA_FIELD_COMPLETION_HANDLE | FWPS_METADATA_FIELD_COMPARTMENT_ID |
                                 FWPS_METADATA_FIELD_IP_HEADER_SIZE | FWPS_METADATA_FIELD_TRANSPORT_HEADER_SIZE;
    meta.processId = ci->pid;
    meta.processPath = &path;
    meta.completionHandle = (HANDLE)(ULONG_PTR)next_completion++;
    meta.compartmentId = 1;
    meta.ipHeaderSize = ci->ip_header_size;
    meta.transportHeaderSize = ci->transport_header_size;
    if (ci->flow_handle) {
        meta.currentMetadataValues |= FWPS_METADATA_FIELD_FLOW_HANDLE;
        meta.flowHandle = ci->flow_handle;
    }
    if (ci->scope_id) {
        meta.currentMetadataValues |= FWPS_METADATA_FIELD_REMOTE_SCOPE_ID;
        meta.remoteScopeId = ci->scope_id;
    }
    /* a packet positioned where the stack leaves it: past IP and transport headers */
    fake_nbl *pkt = ci->with_packet ? new_nbl(128, 64) : NULL;
    FWPS_CLASSIFY_OUT0 out;
    RtlZeroMemory(&out, sizeof out);
    out.rights = ci->no_write ? 0 : FWPS_RIGHT_ACTION_WRITE;
    callouts[ci->callout].c.classifyFn(&in, &meta, pkt ? &pkt->nbl : NULL, NULL, ci->flow_context, &out);
    co->action = out.actionType;
    co->rights = out.rights;
    co->flags = out.flags;
    /* the original must come back where it was: report a moved original */
    co->reserved = pkt && pkt->nb.DataOffset != 128 ? 1 : 0;
    if (pkt)
        ExFreePoolWithTag(pkt, 'tsQS');
    return STATUS_SUCCESS;
}

static NTSTATUS run_bfe(UINT32 state);

static NTSTATUS NTAPI hook_ioctl(PDEVICE_OBJECT dev, PIRP irp)
{
    PIO_STACK_LOCATION sp = IoGetCurrentIrpStackLocation(irp);
    ULONG code = sp->Parameters.DeviceIoControl.IoControlCode;
    ULONG in_len = sp->Parameters.DeviceIoControl.InputBufferLength;
    ULONG out_len = sp->Parameters.DeviceIoControl.OutputBufferLength;
    void *buf = irp->AssociatedIrp.SystemBuffer;
    NTSTATUS st;
    ULONG info = 0;
    if (code == IOCTL_STANDIN_COUNTS) {
        st = out_len >= sizeof cnt ? STATUS_SUCCESS : STATUS_BUFFER_TOO_SMALL;
        if (NT_SUCCESS(st)) {
            RtlCopyMemory(buf, &cnt, sizeof cnt);
            info = sizeof cnt;
        }
    } else if (code == IOCTL_STANDIN_CLASSIFY) {
        sq_classify_in ci;
        sq_classify_out co;
        st = STATUS_INVALID_PARAMETER;
        /* the v6 tail is optional: the bridge check (C#) writes the v4 request only */
        if (in_len >= offsetof(sq_classify_in, local_addr6) && out_len >= sizeof co) {
            RtlZeroMemory(&ci, sizeof ci);
            RtlCopyMemory(&ci, buf, in_len < sizeof ci ? in_len : sizeof ci);
            RtlZeroMemory(&co, sizeof co);
            st = run_classify(&ci, &co);
            if (NT_SUCCESS(st)) {
                RtlCopyMemory(buf, &co, sizeof co);
                info = sizeof co;
            }
        }
    } else if (standin_etw_ioctl(code, buf, in_len, out_len, &st, &info)) {
    } else if (code == IOCTL_STANDIN_BFE) {
        st = in_len >= sizeof(UINT32) ? run_bfe(*(const UINT32 *)buf) : STATUS_INVALID_PARAMETER;
    } else if (code == IOCTL_STANDIN_PROCESS) {
        sq_process_in pi;
        st = STATUS_INVALID_PARAMETER;
        if (in_len >= sizeof pi) {
            RtlCopyMemory(&pi, buf, sizeof pi);
            st = run_process(&pi);
        }
    } else if (shaper_request(code, buf, in_len, out_len, &st, &info)) {
    } else if (!sq_boot_ioctl(code, buf, in_len, out_len, &st, &info)) {
        return orig_ioctl(dev, irp);
    }
    irp->IoStatus.Status = st;
    irp->IoStatus.Information = info;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
    return st;
}

static NTSTATUS NTAPI hook_cleanup(PDEVICE_OBJECT dev, PIRP irp)
{
    cnt.cleanup_irps++;
    return orig_cleanup(dev, irp);
}

static NTSTATUS NTAPI hook_create(PDEVICE_OBJECT dev, PIRP irp)
{
    cnt.create_irps++;
    NTSTATUS st = orig_create(dev, irp);
    if (!NT_SUCCESS(st))
        cnt.create_refused++;
    return st;
}

static NTSTATUS NTAPI hook_close(PDEVICE_OBJECT dev, PIRP irp)
{
    cnt.close_irps++;
    return orig_close(dev, irp);
}

static void NTAPI hook_unload(PDRIVER_OBJECT drv)
{
    orig_unload(drv);
    write_balances("unload");
}

/* ---- fwpkclnt.sys exports ---- */
NTSTATUS NTAPI FwpsCalloutRegister0(void *device, const FWPS_CALLOUT0 *c, UINT32 *id)
{
    if (n_callouts == 3 && GetFileAttributesA(FAIL_REGISTER_FLAG) != 0xFFFFFFFFu) {
        DeleteFileA(FAIL_REGISTER_FLAG);
        return STATUS_UNSUCCESSFUL; /* injected: the fourth registration fails once */
    }
    if (n_callouts >= MAX_CALLOUTS)
        return STATUS_INSUFFICIENT_RESOURCES;
    if (n_callouts == 0 && device) {
        PDRIVER_OBJECT drv = ((PDEVICE_OBJECT)device)->DriverObject;
        orig_ioctl = drv->MajorFunction[IRP_MJ_DEVICE_CONTROL];
        drv->MajorFunction[IRP_MJ_DEVICE_CONTROL] = hook_ioctl;
        orig_cleanup = drv->MajorFunction[IRP_MJ_CLEANUP];
        if (orig_cleanup)
            drv->MajorFunction[IRP_MJ_CLEANUP] = hook_cleanup;
        orig_create = drv->MajorFunction[IRP_MJ_CREATE];
        drv->MajorFunction[IRP_MJ_CREATE] = hook_create;
        orig_close = drv->MajorFunction[IRP_MJ_CLOSE];
        drv->MajorFunction[IRP_MJ_CLOSE] = hook_close;
        orig_unload = drv->DriverUnload;
        if (orig_unload)
            drv->DriverUnload = hook_unload;
    }
    callouts[n_callouts].c = *c;
    callouts[n_callouts].id = 100 + n_callouts;
    callouts[n_callouts].live = 1;
    *id = callouts[n_callouts].id;
    n_callouts++;
    cnt.callouts_registered++;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI FwpsCalloutUnregisterById0(const UINT32 id)
{
    for (UINT32 i = 0; i < n_callouts; i++) {
        if (callouts[i].id != id || !callouts[i].live)
            continue;
        for (UINT32 k = 0; k < MAX_CTX; k++)
            if (ctxs[k].live && ctxs[k].callout == id) {
                cnt.unregister_busy++;
                return STATUS_DEVICE_BUSY;
            }
        if (callouts[i].had_context) {
            callouts[i].had_context = 0;
            cnt.unregister_busy++;
            return STATUS_DEVICE_BUSY; /* once, as while a flow-delete callback is still running */
        }
        callouts[i].live = 0;
        cnt.callouts_unregistered++;
        return STATUS_SUCCESS;
    }
    return STATUS_NOT_FOUND;
}

NTSTATUS NTAPI FwpsFlowAssociateContext0(UINT64 flow, UINT16 layer, UINT32 callout, UINT64 ctx)
{
    for (UINT32 k = 0; k < MAX_CTX; k++) {
        if (ctxs[k].live)
            continue;
        ctxs[k].flow = flow, ctxs[k].layer = layer, ctxs[k].callout = callout, ctxs[k].ctx = ctx, ctxs[k].live = 1;
        for (UINT32 i = 0; i < n_callouts; i++)
            if (callouts[i].id == callout)
                callouts[i].had_context = 1;
        cnt.flow_associated++;
        return STATUS_SUCCESS;
    }
    return STATUS_INSUFFICIENT_RESOURCES;
}

NTSTATUS NTAPI FwpsFlowRemoveContext0(UINT64 flow, UINT16 layer, UINT32 callout)
{
    for (UINT32 k = 0; k < MAX_CTX; k++) {
        if (!ctxs[k].live || ctxs[k].flow != flow || ctxs[k].layer != layer || ctxs[k].callout != callout)
            continue;
        ctxs[k].live = 0;
        cnt.flow_removed++;
        for (UINT32 i = 0; i < n_callouts; i++)
            if (callouts[i].id == callout && callouts[i].c.flowDeleteFn) {
                cnt.flow_delete_calls++;
                callouts[i].c.flowDeleteFn(layer, callout, ctxs[k].ctx);
            }
        return STATUS_SUCCESS;
    }
    return STATUS_UNSUCCESSFUL;
}

NTSTATUS NTAPI FwpsPendOperation0(HANDLE completion_handle, HANDLE *completion_ctx)
{
    *completion_ctx = (HANDLE)((ULONG_PTR)completion_handle | 0x10000);
    cnt.pended++;
    return STATUS_SUCCESS;
}

void NTAPI FwpsCompleteOperation0(HANDLE completion_ctx, NET_BUFFER_LIST *nbl)
{
    if (!completion_ctx)
        return; /* a NULL handle is the defect the slot ordering prevents: not counted */
    cnt.completed++;
    if (nbl)
        cnt.completed_with_packet++;
}

NTSTATUS NTAPI FwpsInjectionHandleCreate0(ADDRESS_FAMILY af, UINT32 flags, HANDLE *h)
{
    (void)flags;
    *h = (HANDLE)(ULONG_PTR)(0x7000 + af);
    cnt.injection_handles++;
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI FwpsInjectionHandleDestroy0(HANDLE h)
{
    (void)h;
    cnt.injection_handles_destroyed++;
    return STATUS_SUCCESS;
}

FWPS_PACKET_INJECTION_STATE NTAPI FwpsQueryPacketInjectionState0(HANDLE h, const NET_BUFFER_LIST *nbl,
                                                                HANDLE *ctx)
{
    (void)h, (void)ctx;
    fake_nbl *f = as_fake(nbl);
    return f && f->injected ? FWPS_PACKET_INJECTED_BY_SELF : FWPS_PACKET_NOT_INJECTED;
}

NTSTATUS NTAPI FwpsAllocateCloneNetBufferList0(NET_BUFFER_LIST *orig, NDIS_HANDLE p1, NDIS_HANDLE p2, ULONG flags,
                                               NET_BUFFER_LIST **clone)
{
    (void)p1, (void)p2, (void)flags;
    fake_nbl *o = as_fake(orig);
    if (!o)
        return STATUS_INVALID_PARAMETER;
    fake_nbl *c = new_nbl(o->nb.DataOffset, o->nb.DataLength); /* a clone inherits the current offset */
    if (!c)
        return STATUS_INSUFFICIENT_RESOURCES;
    c->created_offset = o->created_offset;
    c->is_clone = 1;
    *clone = &c->nbl;
    cnt.clones++;
    return STATUS_SUCCESS;
}

void NTAPI FwpsFreeCloneNetBufferList0(NET_BUFFER_LIST *nbl, ULONG flags)
{
    (void)flags;
    fake_nbl *f = as_fake(nbl);
    if (!f || !f->is_clone)
        return;
    f->magic = 0;
    ExFreePoolWithTag(f, 'tsQS');
    cnt.clones_freed++;
}

NTSTATUS NTAPI FwpsInjectTransportSendAsync0(HANDLE h, HANDLE ictx, UINT64 endpoint, UINT32 flags,
                                             FWPS_TRANSPORT_SEND_PARAMS0 *args, ADDRESS_FAMILY af, COMPARTMENT_ID comp,
                                             NET_BUFFER_LIST *nbl, FWPS_INJECT_COMPLETE0 done, HANDLE done_ctx)
{
    (void)h, (void)ictx, (void)endpoint, (void)flags, (void)af, (void)comp;
    fake_nbl *f = as_fake(nbl);
    if (!f || !args || !args->remoteAddress)
        return STATUS_INVALID_PARAMETER;
    f->injected = 1;
    cnt.inject_send++;
    shaper_note_send(h, endpoint, args, af, comp, nbl);
    RtlCopyMemory(&cnt.last_send_remote, args->remoteAddress, 4);
    done(done_ctx, nbl, FALSE);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI FwpsInjectTransportReceiveAsync0(HANDLE h, HANDLE ictx, void *reserved, UINT32 flags,
                                                ADDRESS_FAMILY af, COMPARTMENT_ID comp, IF_INDEX ifi, IF_INDEX subifi,
                                                NET_BUFFER_LIST *nbl, FWPS_INJECT_COMPLETE0 done, HANDLE done_ctx)
{
    (void)h, (void)ictx, (void)reserved, (void)flags, (void)af, (void)comp;
    fake_nbl *f = as_fake(nbl);
    if (!f)
        return STATUS_INVALID_PARAMETER;
    f->injected = 1;
    cnt.inject_receive++;
    shaper_note_receive(h, af, comp, ifi, subifi, nbl);
    cnt.last_receive_if = ifi;
    cnt.last_receive_sub_if = subifi;
    cnt.last_receive_offset_back = f->created_offset - f->nb.DataOffset;
    done(done_ctx, nbl, FALSE);
    return STATUS_SUCCESS;
}

NTSTATUS NTAPI FwpsGetPacketListSecurityInformation0(NET_BUFFER_LIST *nbl, UINT32 query, void *info)
{
    (void)nbl, (void)query, (void)info;
    return STATUS_SUCCESS; /* the caller zeroed it: not IPsec */
}

NTSTATUS NTAPI FwpmEngineOpen0(const wchar_t *server, UINT32 authn, void *auth, const FWPM_SESSION0 *s, HANDLE *h)
{
    (void)server, (void)authn, (void)auth;
    if (!s || !(s->flags & FWPM_SESSION_FLAG_DYNAMIC))
        return sq_boot_engine_open(h); /* what it adds outlives it: standin_boot.c */
    *h = (HANDLE)(ULONG_PTR)0x6000;
    cnt.engine_open++;
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmEngineClose0(HANDLE h)
{
    if (sq_boot_owns(h))
        return sq_boot_engine_close(h);
    cnt.engine_close++;
    RtlZeroMemory(filter_live, sizeof filter_live); /* a dynamic session's filters go with it */
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmTransactionBegin0(HANDLE h, UINT32 f)
{
    (void)f;
    if (sq_boot_owns(h))
        return sq_boot_txn(h, SQ_TXN_BEGIN);
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmTransactionCommit0(HANDLE h)
{
    if (sq_boot_owns(h))
        return sq_boot_txn(h, SQ_TXN_COMMIT);
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmTransactionAbort0(HANDLE h)
{
    if (sq_boot_owns(h))
        return sq_boot_txn(h, SQ_TXN_ABORT);
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmSubLayerAdd0(HANDLE h, const FWPM_SUBLAYER0 *s, PSECURITY_DESCRIPTOR sd)
{
    (void)sd;
    if (sq_boot_owns(h))
        return sq_boot_sublayer_add(h, s);
    cnt.sublayers_added++;
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmCalloutAdd0(HANDLE h, const FWPM_CALLOUT0 *c, PSECURITY_DESCRIPTOR sd, UINT32 *id)
{
    (void)h, (void)c, (void)sd, (void)id;
    cnt.callouts_added++;
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmFilterAdd0(HANDLE h, const FWPM_FILTER0 *f, PSECURITY_DESCRIPTOR sd, UINT64 *id)
{
    (void)sd;
    if (sq_boot_owns(h) || f->flags)
        return sq_boot_filter_add(h, f, id);
    cnt.filters_added++;
    UINT64 fid = next_filter_id++;
    for (int i = 0; i < MAX_FILTERS; i++)
        if (!filter_live[i]) {
            filter_live[i] = fid;
            break;
        }
    if (id)
        *id = fid;
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmFilterDeleteById0(HANDLE h, UINT64 id)
{
    (void)h;
    for (int i = 0; i < MAX_FILTERS; i++)
        if (filter_live[i] == id) {
            filter_live[i] = 0;
            cnt.filters_deleted++;
            return STATUS_SUCCESS;
        }
    cnt.filter_delete_unknown++;
    return (NTSTATUS)0x80320003; /* FWP_E_FILTER_NOT_FOUND */
}

/* BFE: running unless the harness left the flag file; the harness changes
 * the state through IOCTL_STANDIN_BFE, which calls the driver's callback */
static FWPM_SERVICE_STATE bfe_state = FWPM_SERVICE_RUNNING;
static FWPM_SERVICE_STATE_CHANGE_CALLBACK0 bfe_callback;
static void *bfe_context;
FWPM_SERVICE_STATE NTAPI FwpmBfeStateGet0(void)
{
    return bfe_state;
}
NTSTATUS NTAPI FwpmBfeStateSubscribeChanges0(void *dev, FWPM_SERVICE_STATE_CHANGE_CALLBACK0 cb, void *ctx, HANDLE *h)
{
    (void)dev;
    if (bfe_callback || !cb || !h)
        return STATUS_INVALID_PARAMETER;
    bfe_callback = cb;
    bfe_context = ctx;
    *h = (HANDLE)&bfe_callback;
    cnt.bfe_subscribed++;
    if (GetFileAttributesA(BFE_STOPPED_FLAG) != 0xFFFFFFFFu) {
        DeleteFileA(BFE_STOPPED_FLAG);
        bfe_state = FWPM_SERVICE_STOPPED;
    }
    return STATUS_SUCCESS;
}
NTSTATUS NTAPI FwpmBfeStateUnsubscribeChanges0(HANDLE h)
{
    if (h != (HANDLE)&bfe_callback || !bfe_callback)
        return STATUS_INVALID_PARAMETER;
    bfe_callback = NULL;
    cnt.bfe_unsubscribed++;
    return STATUS_SUCCESS;
}
static NTSTATUS run_bfe(UINT32 state)
{
    if (state > FWPM_SERVICE_RUNNING || !bfe_callback)
        return STATUS_INVALID_PARAMETER;
    bfe_state = (FWPM_SERVICE_STATE)state;
    cnt.bfe_callbacks++;
    bfe_callback(bfe_context, bfe_state);
    return STATUS_SUCCESS;
}

/* Wine calls a native DLL's entry point as DllMain: patch the driver, which
 * is mapped and has its imports bound by now, before its DriverEntry. */
int __stdcall DllMain(void *inst, ULONG reason, void *reserved)
{
    (void)inst, (void)reserved;
    if (reason == 1) { /* DLL_PROCESS_ATTACH */
        RtlZeroMemory(&cnt, sizeof cnt);
        bfe_state = FWPM_SERVICE_RUNNING;
        bfe_callback = NULL;
        patch_driver();
        sq_boot_attach();
        load_seen = 1;
    } else if (reason == 0) { /* DLL_PROCESS_DETACH: a failed start never unloads */
        write_balances("detach");
    }
    return 1;
}

/* the per-packet requests: one file, sharing this one's records */
#include "standin_shaper.c"
