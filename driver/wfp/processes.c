/* The process-create/exit notify: feeds the core's process table, so that
 * split svchost instances (DNS client, DHCP, remote desktop...) are
 * attributed to their service in the kernel, from their first connection,
 * as Fort Firewall's process tree does. The notify requires the image to be
 * linked with FORCE_INTEGRITY (wfp.mk); a host that refuses the
 * registration still loads the driver, attributing svchost by the agent's
 * bindings only. */
#include "glue.h"

#define SVCHOST_TAIL L"\\System32\\svchost.exe"

static BOOLEAN notify_registered;

/* The name in the ALE layers' form: open \SystemRoot's svchost.exe and ask
 * the object manager for its file object's name (\Device\HarddiskVolumeN\...),
 * which resolves \SystemRoot and \Device\BootDevice for us. */
_IRQL_requires_(PASSIVE_LEVEL)
static NTSTATUS resolve_svchost(void)
{
    UNICODE_STRING path;
    RtlInitUnicodeString(&path, L"\\SystemRoot" SVCHOST_TAIL);
    OBJECT_ATTRIBUTES oa;
    InitializeObjectAttributes(&oa, &path, OBJ_KERNEL_HANDLE | OBJ_CASE_INSENSITIVE, NULL, NULL);
    IO_STATUS_BLOCK iosb;
    HANDLE h = NULL;
    NTSTATUS st = ZwOpenFile(&h, FILE_READ_ATTRIBUTES | SYNCHRONIZE, &oa, &iosb, FILE_SHARE_READ | FILE_SHARE_DELETE,
                             FILE_SYNCHRONOUS_IO_NONALERT | FILE_NON_DIRECTORY_FILE);
    if (!NT_SUCCESS(st))
        return st;
    PVOID file = NULL;
    st = ObReferenceObjectByHandle(h, FILE_READ_ATTRIBUTES, *IoFileObjectType, KernelMode, &file, NULL);
    ZwClose(h);
    if (!NT_SUCCESS(st))
        return st;
    /* OBJECT_NAME_INFORMATION and room for the longest name the core takes */
    ULONG cap = sizeof(OBJECT_NAME_INFORMATION) + SQFW_SVCHOST_PATH_MAX * sizeof(WCHAR);
    POBJECT_NAME_INFORMATION name = ExAllocatePoolWithTag(PagedPool, cap, SQFW_TAG);
    if (!name) {
        ObDereferenceObject(file);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    ULONG got = 0;
    st = ObQueryNameString(file, name, cap, &got);
    ObDereferenceObject(file);
    if (NT_SUCCESS(st)) {
        KIRQL irql;
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        int rc = sqfw_set_svchost_path(g_sqfw.engine, (const uint16_t *)name->Name.Buffer,
                                       name->Name.Length / sizeof(WCHAR));
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        st = rc == SQFW_OK ? STATUS_SUCCESS : STATUS_NAME_TOO_LONG;
    }
    ExFreePoolWithTag(name, SQFW_TAG);
    return st;
}

/* The mapped image's identity (volume serial, file id) from the file object
 * the kernel mapped: the agent then hashes the file at the path only if it
 * is that file (an image mapped for execution cannot be written, so the
 * same file is the same content). Unknown stays 0. */
_IRQL_requires_(PASSIVE_LEVEL)
static void image_identity(PFILE_OBJECT file, sqfw_process_info *pi)
{
    HANDLE h = NULL;
    if (!file || !NT_SUCCESS(ObOpenObjectByPointer(file, OBJ_KERNEL_HANDLE, NULL, FILE_READ_ATTRIBUTES, *IoFileObjectType,
                                                   KernelMode, &h)))
        return;
    IO_STATUS_BLOCK iosb;
    SQFW_FILE_INTERNAL_INFORMATION id;
    union {
        FILE_FS_VOLUME_INFORMATION v;
        UCHAR room[sizeof(FILE_FS_VOLUME_INFORMATION) + 64]; /* the label is not needed; the status may say overflow */
    } vol;
    NTSTATUS st = ZwQueryInformationFile(h, &iosb, &id, sizeof id, FileInternalInformation);
    NTSTATUS sv = ZwQueryVolumeInformationFile(h, &iosb, &vol, sizeof vol, FileFsVolumeInformation);
    ZwClose(h);
    if (NT_SUCCESS(st) && (NT_SUCCESS(sv) || sv == STATUS_BUFFER_OVERFLOW)) {
        pi->image_file_id = (uint64_t)id.IndexNumber.QuadPart;
        pi->image_volume = vol.v.VolumeSerialNumber;
    }
}

_IRQL_requires_(PASSIVE_LEVEL)
static void NTAPI on_process(PEPROCESS process, HANDLE pid, PPS_CREATE_NOTIFY_INFO info)
{
    UINT64 key = SQFW_PROCESS_KEY((UINT64)(ULONG_PTR)pid, (UINT64)PsGetProcessCreateTimeQuadPart(process));
    if (!key)
        key = 1; /* as request.c: 0 means "no process" to the core */
    KIRQL irql;
    if (!info) {
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        sqfw_process_exited(g_sqfw.engine, key);
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        return;
    }
    /* allocated by the kernel, outside the lock; not on the packet path */
    PUNICODE_STRING image = NULL;
    if (!NT_SUCCESS(SeLocateProcessImageName(process, &image)))
        image = NULL;
    sqfw_process_info pi;
    sq_zero(&pi, sizeof pi);
    pi.process_key = key;
    pi.pid = (uint32_t)(ULONG_PTR)pid;
    if (image && image->Buffer) {
        pi.image = (const uint16_t *)image->Buffer;
        pi.image_chars = image->Length / sizeof(WCHAR);
    }
    image_identity(info->FileObject, &pi);
    if (info->CommandLine && info->CommandLine->Buffer) {
        pi.cmdline = (const uint16_t *)info->CommandLine->Buffer;
        pi.cmdline_chars = info->CommandLine->Length / sizeof(WCHAR);
    }
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    sqfw_process_created(g_sqfw.engine, &pi, sqfw_now_ns()); /* a full table is counted in the core's stats */
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (image)
        ExFreePool(image);
}

NTSTATUS sqfw_processes_start(void)
{
    NTSTATUS st = resolve_svchost();
    if (!NT_SUCCESS(st))
        DbgPrint("sieveqfw: svchost.exe not resolved (0x%08lx): services attributed by the agent only\n", st);
    st = PsSetCreateProcessNotifyRoutineEx(on_process, FALSE);
    if (!NT_SUCCESS(st)) {
        DbgPrint("sieveqfw: process notify refused (0x%08lx): services attributed by the agent only\n", st);
        return STATUS_SUCCESS;
    }
    notify_registered = TRUE;
    return STATUS_SUCCESS;
}

void sqfw_processes_stop(void)
{
    if (notify_registered) {
        PsSetCreateProcessNotifyRoutineEx(on_process, TRUE);
        notify_registered = FALSE;
    }
}
