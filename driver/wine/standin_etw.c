/* TEST ONLY (part of the fwpkclnt.sys stand-in): Wine 8.0's ntoskrnl has no
 * Etw* routines, so the driver's MmGetSystemRoutineAddress import is
 * patched to hand out these recorders. They keep what the driver registers
 * and writes, byte for byte, for the harness to decode; the harness plays
 * the trace session through IOCTL_STANDIN_ETW_ENABLE. */
#define POOL_TAGGING 1
#include "../wfp/include/wfp_decls.h"

#include "standin_etw.h"

typedef void *(*patch_fn)(UINT8 *base, const char *dll, const char *fn, void *repl);
typedef PVOID(NTAPI *routine_fn)(PUNICODE_STRING);

/* kernel32 (winedevice.exe has it loaded) and ntoskrnl's C runtime, as in standin.c */
__declspec(dllimport) ULONG __stdcall GetFileAttributesA(const char *name);
__declspec(dllimport) int __cdecl _snprintf(char *buf, size_t n, const char *fmt, ...);

static routine_fn real_routine;
static sq_etw_state st;
static sq_etw_record rec[SQ_ETW_MAX_RECORDS];
static KSPIN_LOCK lock;
static PETWENABLECALLBACK callback;
static PVOID callback_ctx;
static GUID provider;
#define HANDLE_VALUE 0x5E1EE0ull

static NTSTATUS NTAPI rec_register(LPCGUID id, PETWENABLECALLBACK cb, PVOID ctx, PREGHANDLE h)
{
    st.registered++;
    provider = *id;
    RtlCopyMemory(st.provider_guid, id, 16);
    callback = cb;
    callback_ctx = ctx;
    *h = HANDLE_VALUE;
    return STATUS_SUCCESS;
}

static NTSTATUS NTAPI rec_unregister(REGHANDLE h)
{
    if (h != HANDLE_VALUE)
        return STATUS_INVALID_HANDLE;
    st.unregistered++;
    callback = NULL;
    return STATUS_SUCCESS;
}

static NTSTATUS NTAPI rec_set_information(REGHANDLE h, ULONG cls, PVOID info, ULONG len)
{
    if (h != HANDLE_VALUE || cls != 2 /* EventProviderSetTraits */ || len > sizeof st.traits)
        return STATUS_INVALID_PARAMETER;
    st.traits_set++;
    st.traits_len = len;
    RtlCopyMemory(st.traits, info, len);
    return STATUS_SUCCESS;
}

static NTSTATUS NTAPI rec_write_transfer(REGHANDLE h, PCEVENT_DESCRIPTOR ed, LPCGUID act, LPCGUID rel, ULONG n,
                                         PEVENT_DATA_DESCRIPTOR dd)
{
    (void)act, (void)rel;
    if (h != HANDLE_VALUE || n > 8)
        return STATUS_INVALID_PARAMETER;
    KIRQL irql;
    KeAcquireSpinLock(&lock, &irql);
    st.writes++;
    if (st.records < SQ_ETW_MAX_RECORDS) {
        sq_etw_record *r = &rec[st.records++];
        RtlZeroMemory(r, sizeof *r);
        r->id = ed->Id, r->version = ed->Version, r->channel = ed->Channel, r->level = ed->Level;
        r->opcode = ed->Opcode, r->task = ed->Task, r->keyword = ed->Keyword;
        r->n_desc = n;
        for (ULONG i = 0; i < n; i++) {
            r->desc_type[i] = dd[i].Reserved & 0xFF;
            r->desc_size[i] = dd[i].Size;
            if (dd[i].Size <= SQ_ETW_RECORD_DATA - r->data_len) {
                RtlCopyMemory(r->data + r->data_len, (const void *)(ULONG_PTR)dd[i].Ptr, dd[i].Size);
                r->data_len += dd[i].Size;
            }
        }
    }
    KeReleaseSpinLock(&lock, irql);
    return STATUS_SUCCESS;
}

static const struct {
    const WCHAR *name;
    void *fn;
} recorders[] = {
    {L"EtwRegister", (void *)rec_register},
    {L"EtwUnregister", (void *)rec_unregister},
    {L"EtwSetInformation", (void *)rec_set_information},
    {L"EtwWriteTransfer", (void *)rec_write_transfer},
};

static PVOID NTAPI my_MmGetSystemRoutineAddress(PUNICODE_STRING name)
{
    for (ULONG i = 0; i < sizeof recorders / sizeof recorders[0]; i++) {
        UNICODE_STRING s;
        RtlInitUnicodeString(&s, recorders[i].name);
        if (RtlEqualUnicodeString(name, &s, FALSE)) {
            st.lookups_answered++;
            return st.absent ? NULL : recorders[i].fn;
        }
    }
    return real_routine(name);
}

void standin_etw_patch(UINT8 *base, patch_fn patch)
{
    RtlZeroMemory(&st, sizeof st);
    KeInitializeSpinLock(&lock);
    callback = NULL;
    st.absent = GetFileAttributesA(SQ_ETW_ABSENT_FLAG) != 0xFFFFFFFFu;
    void *old = patch(base, "ntoskrnl.exe", "MmGetSystemRoutineAddress", (void *)my_MmGetSystemRoutineAddress);
    real_routine = old ? (routine_fn)old : MmGetSystemRoutineAddress;
}

/* For the stand-in's unload line: registrations not undone. */
LONG64 standin_etw_leak(char *text, ULONG cap)
{
    _snprintf(text, cap, "etw=%llu/%llu%s", st.registered, st.unregistered, st.absent ? " (absent)" : "");
    return (LONG64)(st.registered - st.unregistered);
}

/* Returns 1 when the code is the recorder's (status and length set). */
int standin_etw_ioctl(ULONG code, void *buf, ULONG in_len, ULONG out_len, NTSTATUS *status, ULONG *info)
{
    if (code == IOCTL_STANDIN_ETW_STATE) {
        *status = STATUS_BUFFER_TOO_SMALL;
        if (out_len >= sizeof st) {
            RtlCopyMemory(buf, &st, sizeof st);
            *info = sizeof st;
            *status = STATUS_SUCCESS;
        }
    } else if (code == IOCTL_STANDIN_ETW_ENABLE) {
        sq_etw_enable e;
        *status = STATUS_INVALID_PARAMETER;
        if (in_len >= sizeof e && callback) {
            RtlCopyMemory(&e, buf, sizeof e);
            KIRQL irql;
            KeAcquireSpinLock(&lock, &irql);
            st.records = 0;
            KeReleaseSpinLock(&lock, irql);
            st.enable_calls++;
            callback(&provider, e.control, e.level, e.any, e.all, NULL, callback_ctx);
            *status = STATUS_SUCCESS;
        }
    } else if (code == IOCTL_STANDIN_ETW_EVENT) {
        *status = STATUS_INVALID_PARAMETER;
        if (in_len >= sizeof(UINT32) && out_len >= sizeof(sq_etw_record)) {
            UINT32 i = *(const UINT32 *)buf;
            KIRQL irql;
            KeAcquireSpinLock(&lock, &irql);
            if (i < st.records) {
                RtlCopyMemory(buf, &rec[i], sizeof rec[i]);
                *info = sizeof rec[i];
                *status = STATUS_SUCCESS;
            } else {
                *status = STATUS_NO_MORE_ENTRIES;
            }
            KeReleaseSpinLock(&lock, irql);
        }
    } else {
        return 0;
    }
    return 1;
}
