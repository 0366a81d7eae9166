/* TEST ONLY: drives the real sieveqfw.sys under Wine through its device
 * (\\.\SieveQFw) and, through the fwpkclnt.sys stand-in, its recorded
 * classify functions. Prints `N passed, M failed`; exit code 1 on any failure.
 *
 *   harness.exe GOLDEN_DIR            the handshake, device security and exclusivity (as far as Wine
 *                                     shows them), the IOCTL contract and caps, and classify checks
 *   harness.exe GOLDEN_DIR --loop N   N service start/stop cycles with policies pushed in between,
 *                                     a start whose callout registration fails, then the
 *                                     stand-in's per-unload balances */
#include <windows.h>
#include <aclapi.h>
#include <sddl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/policy_format.h"
#include "../core/sqfw.h"
#include "../wfp/sqfw_ioctl.h"
#include "harness_boot.h"
#include "harness_etw.h"
#include "standin_ioctl.h"

static int passed, failed;
#define CHECK(what, cond)                                                                                              \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            passed++;                                                                                                  \
        } else {                                                                                                       \
            failed++;                                                                                                  \
            printf("FAIL %s (harness.c:%d, last error %lu)\n", what, __LINE__, (unsigned long)GetLastError());        \
        }                                                                                                              \
    } while (0)

#define STATUS_CANCELLED_ 0xC0000120u
#define ACTION_BLOCK 0x1001u
#define ACTION_PERMIT 0x1002u
#define RIGHT_WRITE 1u
#define FLAG_ABSORB 1u

static void etw_check(const char *what, int ok, int line)
{
    ok ? passed++ : (failed++, printf("FAIL %s (harness_etw.c:%d)\n", what, line));
}

static const char *golden_dir;
static UINT8 *blob_ws, *blob_min;
static DWORD len_ws, len_min;

static UINT8 *read_file(const char *name, DWORD *len)
{
    char path[MAX_PATH];
    snprintf(path, sizeof path, "%s\\%s", golden_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    UINT8 *b = malloc(n > 0 ? (size_t)n : 1);
    *len = (DWORD)fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

/* One request on an overlapped handle, waited for. Returns the Win32 error (0 on success). */
static DWORD ioctl(HANDLE h, DWORD code, const void *in, DWORD in_len, void *out, DWORD out_len, DWORD *got)
{
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
    DWORD n = 0, err = 0;
    if (!DeviceIoControl(h, code, (void *)in, in_len, out, out_len, &n, &ov)) {
        err = GetLastError();
        if (err == ERROR_IO_PENDING)
            err = GetOverlappedResult(h, &ov, &n, TRUE) ? 0 : GetLastError();
    } else {
        GetOverlappedResult(h, &ov, &n, TRUE);
    }
    CloseHandle(ov.hEvent);
    if (got)
        *got = n;
    return err;
}

static HANDLE open_raw(void)
{
    return CreateFileW(L"\\\\.\\SieveQFw", GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, FILE_FLAG_OVERLAPPED,
                       NULL);
}

static DWORD hello(HANDLE h, uint32_t version, uint32_t magic)
{
    sqfw_hello_in in = {magic, version};
    sqfw_version_info v;
    return ioctl(h, IOCTL_SQFW_HELLO, &in, sizeof in, &v, sizeof v, NULL);
}

/* Opened and past the handshake, as the agent's bridge does it. */
static HANDLE open_device(void)
{
    HANDLE h = open_raw();
    if (h != INVALID_HANDLE_VALUE && hello(h, SQFW_INTERFACE_VERSION, SQFW_HELLO_MAGIC) != 0) {
        CloseHandle(h);
        return INVALID_HANDLE_VALUE;
    }
    return h;
}

static int stats_refused(HANDLE h)
{
    sqfw_stats s;
    return ioctl(h, IOCTL_SQFW_GET_STATS, NULL, 0, &s, sizeof s, NULL) != 0;
}

static sqfw_stats stats(HANDLE h)
{
    sqfw_stats s;
    memset(&s, 0, sizeof s);
    ioctl(h, IOCTL_SQFW_GET_STATS, NULL, 0, &s, sizeof s, NULL);
    return s;
}

static sq_counts counts(HANDLE h)
{
    sq_counts c;
    memset(&c, 0xFF, sizeof c);
    ioctl(h, IOCTL_STANDIN_COUNTS, NULL, 0, &c, sizeof c, NULL);
    return c;
}

static DWORD push(HANDLE h, const UINT8 *b, DWORD n, sqfw_set_policy_out *res)
{
    memset(res, 0xFF, sizeof *res);
    return ioctl(h, IOCTL_SQFW_SET_POLICY, b, n, res, sizeof *res, NULL);
}

/* ---- the portable core, run here on the same inputs ---- */
static sqfw_engine *core;

static void core_open(void)
{
    sqfw_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_flows = 1024, lim.max_syn_slots = 1024, lim.max_attest = 64, lim.max_services = 16, lim.max_events = 64;
    lim.max_processes = 64;
    lim.seed = 1;
    size_t size = sqfw_engine_size(&lim), need = 0;
    uint32_t off = 0;
    sqfw_policy *p, *old;
    sqfw_engine_init(malloc(size), size, &lim, &core);
    sqfw_policy_arena_size(blob_ws, len_ws, &need, &off);
    sqfw_policy_compile(blob_ws, len_ws, malloc(need), need, &p, &off);
    sqfw_engine_install(core, p, 1, &old);
}

#define AGENT_PATH "\\device\\harddiskvolume2\\program files\\sieveq\\agent.exe"
#define OTHER_PATH "\\device\\harddiskvolume2\\windows\\notepad.exe"
static const UINT8 agent_sha[32] = {0xd4, 0xf0, 0xbc, 0x5a, 0x29, 0xde, 0x06, 0xb5, 0x10, 0xf9, 0xaa,
                                    0x42, 0x8f, 0x1e, 0xed, 0xba, 0x92, 0x60, 0x12, 0xb5, 0x91, 0xfe,
                                    0xf7, 0xa5, 0x18, 0xe7, 0x76, 0xa7, 0xc9, 0xbd, 0x18, 0x24};

/* The verdict the core gives the same connection (no side effects). */
static uint32_t core_verdict(const char *path, uint32_t pid, uint8_t dir, uint8_t proto, uint32_t remote,
                             uint16_t rport, uint16_t lport)
{
    sqfw_request r;
    memset(&r, 0, sizeof r);
    r.process_key = SQFW_PROCESS_KEY(pid, 0); /* the stand-in gives a creation time of 0 */
    r.path = (const uint8_t *)path;
    r.path_len = (uint32_t)strlen(path);
    r.pid = pid;
    r.direction = dir;
    r.protocol = proto;
    r.family = 4;
    r.remote_port = rport;
    r.local_port = lport;
    r.remote_addr[0] = (uint8_t)(remote >> 24), r.remote_addr[1] = (uint8_t)(remote >> 16);
    r.remote_addr[2] = (uint8_t)(remote >> 8), r.remote_addr[3] = (uint8_t)remote;
    r.local_addr[0] = 10, r.local_addr[3] = 5;
    sqfw_decision d;
    sqfw_explain(core, &r, 2, &d);
    return d.verdict;
}

static sq_classify_out classify(HANDLE h, uint32_t callout, uint32_t layer, const char *path, uint32_t pid,
                                uint8_t proto, uint32_t remote, uint16_t rport, uint16_t lport, uint8_t reauth,
                                uint8_t packet)
{
    sq_classify_in ci;
    memset(&ci, 0, sizeof ci);
    ci.callout = callout, ci.layer_id = layer, ci.protocol = proto, ci.reauth = reauth, ci.with_packet = packet;
    ci.local_addr = 0x0A000005u, ci.remote_addr = remote, ci.local_port = lport, ci.remote_port = rport;
    ci.pid = pid, ci.if_index = 7, ci.sub_if_index = 3, ci.ip_header_size = 20, ci.transport_header_size = 20;
    size_t n = strlen(path);
    for (size_t i = 0; i < n; i++)
        ci.path[i] = (uint16_t)(unsigned char)path[i];
    ci.path_bytes = (uint32_t)(2 * n);
    sq_classify_out co;
    memset(&co, 0xEE, sizeof co);
    if (ioctl(h, IOCTL_STANDIN_CLASSIFY, &ci, sizeof ci, &co, sizeof co, NULL) != 0)
        memset(&co, 0xEE, sizeof co);
    return co;
}

static int wait_count(HANDLE h, size_t offset, uint64_t want)
{
    for (int i = 0; i < 300; i++) {
        sq_counts c = counts(h);
        if (*(uint64_t *)((char *)&c + offset) >= want)
            return 1;
        Sleep(10);
    }
    return 0;
}
#define WAIT_COUNT(h, field, want) wait_count(h, offsetof(sq_counts, field), want)

static sqfw_event last_allowed; /* the last ALLOWED event drain_events saw */

/* Takes every queued event; returns the process key of the last NEW_IDENTITY seen (0 if none). */
static uint64_t drain_events(HANDLE h, uint32_t *last_type)
{
    uint64_t key = 0;
    for (int round = 0; round < 50; round++) {
        sqfw_event ev[8];
        OVERLAPPED ov;
        memset(&ov, 0, sizeof ov);
        ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
        DWORD n = 0;
        BOOL ok = DeviceIoControl(h, IOCTL_SQFW_WAIT_EVENTS, NULL, 0, ev, sizeof ev, &n, &ov);
        if (!ok && GetLastError() == ERROR_IO_PENDING) {
            if (WaitForSingleObject(ov.hEvent, 50) != WAIT_OBJECT_0) {
                CancelIoEx(h, &ov);
                GetOverlappedResult(h, &ov, &n, TRUE);
                CloseHandle(ov.hEvent);
                return key;
            }
            ok = GetOverlappedResult(h, &ov, &n, TRUE);
        } else if (ok) {
            GetOverlappedResult(h, &ov, &n, TRUE);
        }
        CloseHandle(ov.hEvent);
        if (!ok)
            return key;
        for (DWORD i = 0; i < n / sizeof(sqfw_event); i++) {
            if (last_type)
                *last_type = ev[i].type;
            if (ev[i].type == SQFW_EV_NEW_IDENTITY)
                key = ev[i].process_key;
            if (ev[i].type == SQFW_EV_ALLOWED)
                last_allowed = ev[i];
        }
    }
    return key;
}

static void attest(HANDLE h, uint64_t key)
{
    sqfw_attest_in a;
    a.process_key = key;
    memcpy(a.sha256, agent_sha, 32);
    CHECK("attest accepted", ioctl(h, IOCTL_SQFW_ATTEST, &a, sizeof a, NULL, 0, NULL) == 0);
    if (core)
        sqfw_attest(core, key, agent_sha, 2);
}

/* Before the handshake only GET_VERSION and HELLO are served; a caller of
 * another interface version is refused and stays refused. */
static void handshake(HANDLE h)
{
    sqfw_version_info v;
    memset(&v, 0, sizeof v);
    DWORD got = 0;
    CHECK("version answered before the handshake",
          ioctl(h, IOCTL_SQFW_GET_VERSION, NULL, 0, &v, sizeof v, &got) == 0 && got == sizeof v &&
              v.interface_version == SQFW_INTERFACE_VERSION);
    sqfw_stats s;
    DWORD err = ioctl(h, IOCTL_SQFW_GET_STATS, NULL, 0, &s, sizeof s, NULL);
    CHECK("stats refused before the handshake", err != 0);
    printf("  before the handshake: stats refused with Win32 error %lu\n", (unsigned long)err);
    CHECK("policy push refused before the handshake",
          ioctl(h, IOCTL_SQFW_SET_POLICY, blob_ws, len_ws, &s, 8, NULL) != 0 && stats_refused(h));
    {
        /* the event channel names processes; the write codes decide what may connect */
        sqfw_event ev[2];
        sqfw_attest_in a;
        memset(&a, 0, sizeof a);
        sqfw_bind_in b;
        memset(&b, 0, sizeof b);
        UINT32 lvl = 0;
        CHECK("wait-events, set-level, attest and bind refused before the handshake",
              ioctl(h, IOCTL_SQFW_WAIT_EVENTS, NULL, 0, ev, sizeof ev, NULL) != 0 &&
                  ioctl(h, IOCTL_SQFW_SET_LEVEL, &lvl, sizeof lvl, NULL, 0, NULL) != 0 &&
                  ioctl(h, IOCTL_SQFW_ATTEST, &a, sizeof a, NULL, 0, NULL) != 0 &&
                  ioctl(h, IOCTL_SQFW_BIND_SERVICE, &b, sizeof b, NULL, 0, NULL) != 0);
    }
    CHECK("hello with a bad magic refused", hello(h, SQFW_INTERFACE_VERSION, 0x12345678u) == ERROR_INVALID_PARAMETER);
    err = hello(h, SQFW_INTERFACE_VERSION - 1, SQFW_HELLO_MAGIC);
    CHECK("hello of interface version 2 refused as a revision mismatch", err == ERROR_REVISION_MISMATCH);
    CHECK("still refused after the mismatch", stats_refused(h));
    CHECK("hello of interface version 3 accepted", hello(h, SQFW_INTERFACE_VERSION, SQFW_HELLO_MAGIC) == 0);
    CHECK("stats served after the handshake", !stats_refused(h));
    CHECK("a later mismatched hello withdraws the handle's access",
          hello(h, SQFW_INTERFACE_VERSION + 1, SQFW_HELLO_MAGIC) == ERROR_REVISION_MISMATCH && stats_refused(h));
    CHECK("and a good one restores it", hello(h, SQFW_INTERFACE_VERSION, SQFW_HELLO_MAGIC) == 0 && !stats_refused(h));
}

/* The DACL the driver put on its device, read back through the handle. */
static void security(HANDLE h)
{
    PSECURITY_DESCRIPTOR sd = NULL;
    PACL dacl = NULL;
    DWORD err = GetSecurityInfo(h, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &dacl, NULL, &sd);
    char *sddl = NULL;
    if (err == 0 && sd)
        ConvertSecurityDescriptorToStringSecurityDescriptorA(sd, SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &sddl, NULL);
    printf("  device DACL read back through the handle: \"%s\" (Wine 8.0 keeps no device DACL on file handles)\n",
           sddl ? sddl : "");
    if (sddl)
        LocalFree(sddl);
    if (sd)
        LocalFree(sd);
    sddl = NULL;

    /* what the driver applied, as the stand-in recorded it on its way to Wine */
    sq_counts c = counts(h);
    if (c.sd_sets == 1 && c.sd_len > 0 && c.sd_len <= sizeof c.sd)
        ConvertSecurityDescriptorToStringSecurityDescriptorA(c.sd, SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &sddl,
                                                             NULL);
    printf("  device DACL the driver applied: %s (info 0x%08lx, status 0x%08lx)\n", sddl ? sddl : "(none)",
           (unsigned long)c.sd_info, (unsigned long)c.sd_status);
    CHECK("the driver applied one DACL, protected, and the object manager took it",
          c.sd_sets == 1 && c.sd_info == (DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION) &&
              c.sd_status == 0);
    CHECK("that DACL is SYSTEM and Administrators only (all file access), nothing else",
          sddl && strcmp(sddl, "D:(A;;FA;;;SY)(A;;FA;;;BA)") == 0);
    if (sddl)
        LocalFree(sddl);

    HANDLE h2 = open_raw();
    DWORD e2 = h2 == INVALID_HANDLE_VALUE ? GetLastError() : 0;
    c = counts(h);
    printf("  IRP_MJ_CREATE %u (refused %u), IRP_MJ_CLOSE %u so far\n", c.create_irps, c.create_refused, c.close_irps);
    printf("  second open while the first handle is open: %s (error %lu)\n",
           h2 == INVALID_HANDLE_VALUE ? "refused" : "opened", (unsigned long)e2);
    if (h2 != INVALID_HANDLE_VALUE) {
        /* Wine hands out the handle though the driver failed its create: it must get nothing */
        DWORD eh = hello(h2, SQFW_INTERFACE_VERSION, SQFW_HELLO_MAGIC);
        printf("  the second handle's hello: Win32 error %lu\n", (unsigned long)eh);
        CHECK("exclusive: the driver refused the second open", c.create_refused == 1);
        CHECK("exclusive: the second handle gets no handshake and no request",
              eh == ERROR_ACCESS_DENIED && stats_refused(h2));
    } else {
        CHECK("exclusive: a second open is refused while one handle is open", e2 == ERROR_ACCESS_DENIED);
    }
    if (h2 != INVALID_HANDLE_VALUE)
        CloseHandle(h2);
    CHECK("closing the refused handle leaves the owner's requests served", !stats_refused(h));
}

static void contract(HANDLE h)
{
    DWORD got = 0;
    sqfw_version_info v;
    memset(&v, 0, sizeof v);
    CHECK("version answered", ioctl(h, IOCTL_SQFW_GET_VERSION, NULL, 0, &v, sizeof v, &got) == 0 && got == sizeof v);
    CHECK("version abi/format", v.abi_version == SQFW_ABI_VERSION && v.format_version == SQFW_FORMAT_VERSION &&
                                    v.driver_major == 1);
    CHECK("version: short buffer refused", ioctl(h, IOCTL_SQFW_GET_VERSION, NULL, 0, &v, 4, NULL) != 0);
    CHECK("unknown code refused", ioctl(h, SQFW_CTL(0x8FFu, SQFW_READ), NULL, 0, &v, sizeof v, NULL) != 0);

    sqfw_stats s = stats(h);
    CHECK("fresh driver has no policy", s.policy_serial == 0 && s.policy_rules == 0);
    sqfw_set_policy_out res;
    CHECK("golden workstation accepted", push(h, blob_ws, len_ws, &res) == 0 && res.status == SQFW_OK);
    s = stats(h);
    CHECK("workstation installed (serial 42)", s.policy_serial == 42 && s.policy_rules > 0 && s.level_count == 3);

    UINT8 *bad = malloc(len_ws);
    memcpy(bad, blob_ws, len_ws);
    bad[len_ws - 1] ^= 0x5A;
    CHECK("corrupted blob answered", push(h, bad, len_ws, &res) == 0);
    CHECK("corrupted blob refused with a code and offset", res.status != SQFW_OK && res.err_offset < len_ws);
    printf("  corrupted blob: status %u (%s) at offset %u\n", res.status,
           sqfw_status_name((int)res.status), res.err_offset);
    memcpy(bad, blob_ws, len_ws);
    bad[0] ^= 0xFF;
    CHECK("bad magic refused", push(h, bad, len_ws, &res) == 0 && res.status == SQFW_E_MAGIC && res.err_offset == 0);
    free(bad);
    CHECK("running policy kept after refusals", stats(h).policy_serial == 42);
    CHECK("truncated blob refused", push(h, blob_ws, SQFW_HDR_SIZE - 1, &res) == ERROR_INVALID_PARAMETER);
    DWORD big = SQFW_DRIVER_MAX_POLICY + 1;
    UINT8 *huge = VirtualAlloc(NULL, big, MEM_COMMIT, PAGE_READWRITE);
    if (huge) {
        memcpy(huge, blob_ws, len_ws);
        CHECK("oversized blob refused", push(h, huge, big, &res) == ERROR_INVALID_PARAMETER);
        VirtualFree(huge, 0, MEM_RELEASE);
    }
    DWORD len_big = 0;
    UINT8 *big_ok = read_file("big-100k.bin", &len_big);
    CHECK("100 000 rules (4 MB blob, 10 MB arena) accepted",
          big_ok && push(h, big_ok, len_big, &res) == 0 && res.status == SQFW_OK && stats(h).policy_rules == 100000);
    free(big_ok);
    UINT8 *big_bad = read_file("big-175k.bin", &len_big);
    CHECK("175 000 rules: blob under its cap, arena over its cap, refused as a limit",
          big_bad && len_big <= SQFW_DRIVER_MAX_POLICY && push(h, big_bad, len_big, &res) == 0 &&
              res.status == SQFW_E_LIMIT && stats(h).policy_rules == 100000);
    free(big_bad);
    CHECK("golden minimal accepted", push(h, blob_min, len_min, &res) == 0 && res.status == SQFW_OK);
    CHECK("minimal replaced workstation", stats(h).policy_serial != 42);
    CHECK("workstation back", push(h, blob_ws, len_ws, &res) == 0 && res.status == SQFW_OK &&
                                   stats(h).policy_serial == 42);

    UINT32 lvl = 2;
    CHECK("level 2 set", ioctl(h, IOCTL_SQFW_SET_LEVEL, &lvl, sizeof lvl, NULL, 0, NULL) == 0 && stats(h).level == 2);
    lvl = 3;
    CHECK("level 3 of 3 refused", ioctl(h, IOCTL_SQFW_SET_LEVEL, &lvl, sizeof lvl, NULL, 0, NULL) != 0 &&
                                      stats(h).level == 2);
    CHECK("short level refused", ioctl(h, IOCTL_SQFW_SET_LEVEL, &lvl, 2, NULL, 0, NULL) != 0);
    lvl = 0;
    CHECK("level 0 set", ioctl(h, IOCTL_SQFW_SET_LEVEL, &lvl, sizeof lvl, NULL, 0, NULL) == 0 && stats(h).level == 0);

    /* events: drain, then one request must pend until an event exists */
    drain_events(h, NULL);
    sqfw_event ev[4];
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
    DWORD n = 0;
    BOOL ok = DeviceIoControl(h, IOCTL_SQFW_WAIT_EVENTS, NULL, 0, ev, sizeof ev, &n, &ov);
    CHECK("wait-events pends with no event", !ok && GetLastError() == ERROR_IO_PENDING);
    CHECK("still pending after 200 ms", WaitForSingleObject(ov.hEvent, 200) == WAIT_TIMEOUT);
    lvl = 1;
    ioctl(h, IOCTL_SQFW_SET_LEVEL, &lvl, sizeof lvl, NULL, 0, NULL);
    CHECK("level change completes the waiting request", WaitForSingleObject(ov.hEvent, 3000) == WAIT_OBJECT_0 &&
                                                            GetOverlappedResult(h, &ov, &n, FALSE) &&
                                                            n >= sizeof(sqfw_event) && ev[0].type == SQFW_EV_LEVEL &&
                                                            ev[0].value == 1);
    lvl = 0;
    ioctl(h, IOCTL_SQFW_SET_LEVEL, &lvl, sizeof lvl, NULL, 0, NULL);
    drain_events(h, NULL);

    ResetEvent(ov.hEvent);
    ok = DeviceIoControl(h, IOCTL_SQFW_WAIT_EVENTS, NULL, 0, ev, sizeof ev, &n, &ov);
    CHECK("second wait pends", !ok && GetLastError() == ERROR_IO_PENDING);
    CancelIoEx(h, &ov);
    ok = GetOverlappedResult(h, &ov, &n, TRUE);
    CHECK("cancelled wait ends aborted", !ok && GetLastError() == ERROR_OPERATION_ABORTED);
    CHECK("short event buffer refused", ioctl(h, IOCTL_SQFW_WAIT_EVENTS, NULL, 0, ev, 8, NULL) != 0);

    CloseHandle(ov.hEvent);
}

/* A waiting request on a handle that is closed must not outlive it
 * (IRP_MJ_CLEANUP). Last: under Wine the request stays pending, its file
 * object is never closed, and the exclusive device stays taken until unload. */
static void cleanup_check(HANDLE h)
{
    sqfw_event ev[4];
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
    DWORD n = 0;
    uint64_t cleanups = counts(h).cleanup_irps;
    CloseHandle(h);
    HANDLE h2 = open_device();
    CHECK("the device opens again once its handle is closed", h2 != INVALID_HANDLE_VALUE);
    if (h2 == INVALID_HANDLE_VALUE)
        return;
    drain_events(h2, NULL);
    BOOL ok = DeviceIoControl(h2, IOCTL_SQFW_WAIT_EVENTS, NULL, 0, ev, sizeof ev, &n, &ov);
    CHECK("wait on the new handle pends", !ok && GetLastError() == ERROR_IO_PENDING);
    CloseHandle(h2);
    DWORD w = WaitForSingleObject(ov.hEvent, 2000);
    HANDLE h3 = open_raw();
    uint64_t after = h3 != INVALID_HANDLE_VALUE ? counts(h3).cleanup_irps : 0;
    if (after > cleanups) {
        CHECK("closing the handle ends its waiting request (IRP_MJ_CLEANUP)",
              w == WAIT_OBJECT_0 && (DWORD)ov.Internal == STATUS_CANCELLED_);
    } else {
        /* not a pass: Wine did not send IRP_MJ_CLEANUP, so the dispatch routine could not be run */
        printf("  not checked: Wine sent no IRP_MJ_CLEANUP when the handle closed (request %s)\n",
               w == WAIT_OBJECT_0 ? "ended" : "still pending; cancelled at unload");
    }
    if (h3 != INVALID_HANDLE_VALUE)
        CloseHandle(h3);
    CloseHandle(ov.hEvent);
}

static void classify_checks(HANDLE h)
{
    core_open();
    const uint32_t R = 0x0A140101u; /* 10.20.1.1 */
    drain_events(h, NULL);
    sq_counts c0 = counts(h);
    CHECK("stand-in recorded 10 callouts, 10 filters, 1 sublayer",
          c0.callouts_registered == 10 && c0.filters_added - c0.filters_deleted == 10 && c0.callouts_added == 10 &&
              c0.sublayers_added == 1 && c0.engine_open == 1 && c0.injection_handles == 2);

    /* an image no identity names */
    sq_classify_out o = classify(h, SQ_C_CONNECT_V4, 48, OTHER_PATH, 4000, 6, R, 443, 50000, 0, 0);
    CHECK("unknown image: blocked, write right cleared", o.action == ACTION_BLOCK && !(o.rights & RIGHT_WRITE));
    CHECK("unknown image: the core agrees",
          core_verdict(OTHER_PATH, 4000, SQFW_DIR_OUTBOUND, 6, R, 443, 50000) == SQFW_BLOCK);
    o = classify(h, SQ_C_CONNECT_V4, 48, OTHER_PATH, 4000, 6, R, 443, 50000, 0, 0);

    /* the agent (path + SHA-256): pended until attested, then permitted on re-authorisation */
    CHECK("agent before attestation: the core pends",
          core_verdict(AGENT_PATH, 4100, SQFW_DIR_OUTBOUND, 6, R, 443, 50001) == SQFW_PEND);
    o = classify(h, SQ_C_CONNECT_V4, 48, AGENT_PATH, 4100, 6, R, 443, 50001, 0, 0);
    CHECK("agent connect absorbed, write right cleared",
          o.action == ACTION_BLOCK && (o.flags & FLAG_ABSORB) && !(o.rights & RIGHT_WRITE));
    sq_counts c1 = counts(h);
    CHECK("pended once", c1.pended == c0.pended + 1 && c1.completed == c0.completed);
    uint64_t key = drain_events(h, NULL);
    CHECK("NEW_IDENTITY event names the process", key == SQFW_PROCESS_KEY(4100, 0));
    CHECK("not completed before the answer", counts(h).completed == c0.completed);
    attest(h, key);
    CHECK("attestation completes the pend", WAIT_COUNT(h, completed, c0.completed + 1));
    o = classify(h, SQ_C_CONNECT_V4, 48, AGENT_PATH, 4100, 6, R, 443, 50001, 1, 0);
    CHECK("re-authorisation permits", o.action == ACTION_PERMIT);
    CHECK("attested agent: the core allows",
          core_verdict(AGENT_PATH, 4100, SQFW_DIR_OUTBOUND, 6, R, 443, 50001) == SQFW_ALLOW);
    o = classify(h, SQ_C_CONNECT_V4, 48, AGENT_PATH, 4100, 6, 0x0A150101u, 443, 50002, 0, 0);
    CHECK("attested agent outside its rule: blocked like the core",
          o.action == ACTION_BLOCK &&
              core_verdict(AGENT_PATH, 4100, SQFW_DIR_OUTBOUND, 6, 0x0A150101u, 443, 50002) == SQFW_BLOCK);

    /* the first datagram of a pended connect is kept and sent once permitted */
    sq_counts c2 = counts(h);
    o = classify(h, SQ_C_CONNECT_V4, 48, AGENT_PATH, 4200, 6, R, 443, 50003, 0, 1);
    CHECK("connect with a packet absorbed", (o.flags & FLAG_ABSORB) && o.reserved == 0);
    CHECK("its packet cloned", counts(h).clones == c2.clones + 1);
    attest(h, drain_events(h, NULL));
    CHECK("completed", WAIT_COUNT(h, completed, c2.completed + 1));
    o = classify(h, SQ_C_CONNECT_V4, 48, AGENT_PATH, 4200, 6, R, 443, 50003, 1, 0);
    CHECK("re-authorisation permits", o.action == ACTION_PERMIT);
    CHECK("kept packet injected", WAIT_COUNT(h, inject_send, c2.inject_send + 1));
    sq_counts c3 = counts(h);
    CHECK("injected to the connect's remote address, clone freed",
          c3.last_send_remote == 0x0101140Au && c3.clones_freed == c2.clones_freed + 1);

    /* a pended UDP datagram whose connect is then refused is freed, not sent */
    o = classify(h, SQ_C_CONNECT_V4, 48, AGENT_PATH, 4300, 17, R, 443, 50004, 0, 1);
    CHECK("UDP connect absorbed", (o.flags & FLAG_ABSORB) && counts(h).clones == c3.clones + 1);
    attest(h, drain_events(h, NULL));
    CHECK("completed", WAIT_COUNT(h, completed, c3.completed + 1));
    o = classify(h, SQ_C_CONNECT_V4, 48, AGENT_PATH, 4300, 17, R, 443, 50004, 1, 0);
    CHECK("UDP not in the agent's rules: blocked like the core",
          o.action == ACTION_BLOCK &&
              core_verdict(AGENT_PATH, 4300, SQFW_DIR_OUTBOUND, 17, R, 443, 50004) == SQFW_BLOCK);
    sq_counts c4 = counts(h);
    CHECK("refused datagram freed, not sent",
          c4.clones_freed == c3.clones_freed + 1 && c4.inject_send == c3.inject_send);

    /* inbound: the SYN is handed back with the completion and receive-injected at its IP header */
    const uint32_t IN_OK = 0x0A141E05u, IN_BAD = 0x0A630001u; /* 10.20.30.5 (rule), 10.99.0.1 (none) */
    o = classify(h, SQ_C_ACCEPT_V4, 44, AGENT_PATH, 4400, 6, IN_OK, 50000, 8443, 0, 1);
    CHECK("inbound accept absorbed, original left in place",
          o.action == ACTION_BLOCK && (o.flags & FLAG_ABSORB) && !(o.rights & RIGHT_WRITE) && o.reserved == 0);
    attest(h, drain_events(h, NULL));
    CHECK("inbound completed with its packet", WAIT_COUNT(h, completed_with_packet, c4.completed_with_packet + 1));
    CHECK("and receive-injected", WAIT_COUNT(h, inject_receive, c4.inject_receive + 1));
    sq_counts c5 = counts(h);
    CHECK("on the arrival interface 7/3, moved back over IP+TCP headers (40 bytes)",
          c5.last_receive_if == 7 && c5.last_receive_sub_if == 3 && c5.last_receive_offset_back == 40);
    CHECK("the core allows that accept",
          core_verdict(AGENT_PATH, 4400, SQFW_DIR_INBOUND, 6, IN_OK, 50000, 8443) == SQFW_ALLOW);
    o = classify(h, SQ_C_ACCEPT_V4, 44, AGENT_PATH, 4500, 6, IN_BAD, 50000, 8443, 0, 1);
    CHECK("inbound from outside the rule absorbed", (o.flags & FLAG_ABSORB) != 0);
    attest(h, drain_events(h, NULL));
    CHECK("completed", WAIT_COUNT(h, completed, c5.completed + 1));
    Sleep(50);
    sq_counts c6 = counts(h);
    CHECK("refused inbound: completed without its packet, clone freed, nothing injected",
          c6.completed_with_packet == c5.completed_with_packet && c6.inject_receive == c5.inject_receive &&
              c6.clones_freed == c5.clones_freed + 1 &&
              core_verdict(AGENT_PATH, 4500, SQFW_DIR_INBOUND, 6, IN_BAD, 50000, 8443) == SQFW_BLOCK);

    /* a flow context on both transport layers; unload must detach both */
    sq_classify_in ci;
    memset(&ci, 0, sizeof ci);
    ci.callout = SQ_C_FLOW_V4, ci.layer_id = 52, ci.protocol = 6, ci.local_addr = 0x0A000005u, ci.remote_addr = R;
    ci.local_port = 50001, ci.remote_port = 443, ci.pid = 4100, ci.flow_handle = 0xF10, ci.direction = 0;
    const char *p = AGENT_PATH;
    for (size_t i = 0; p[i]; i++)
        ci.path[i] = (uint16_t)(unsigned char)p[i];
    ci.path_bytes = (uint32_t)(2 * strlen(p));
    sq_classify_out co;
    CHECK("flow established answered", ioctl(h, IOCTL_STANDIN_CLASSIFY, &ci, sizeof ci, &co, sizeof co, NULL) == 0 &&
                                            co.action == ACTION_PERMIT);
    sq_counts c7 = counts(h);
    CHECK("flow context associated at both transport layers", c7.flow_associated == c6.flow_associated + 2);
    CHECK("flow counted by the core", stats(h).flows_active == 1);
    sqfw_stats s = stats(h);
    CHECK("driver stats: 5 pended, none pending now", s.pended == 5 && s.pended_now == 0);
}

/* ---- load / unload ---- */
/* The driver's process notify, called by the stand-in as the kernel would;
 * the same create reported to the harness's own core. */
static DWORD process_event(HANDLE h, int create, uint32_t pid, const char *image, const char *cmdline)
{
    sq_process_in pi;
    memset(&pi, 0, sizeof pi);
    pi.create = (uint32_t)create, pi.pid = pid;
    for (size_t i = 0; image[i] && i < 259; i++, pi.image_bytes += 2)
        pi.image[i] = (uint16_t)(unsigned char)image[i];
    for (size_t i = 0; cmdline[i] && i < 259; i++, pi.cmdline_bytes += 2)
        pi.cmdline[i] = (uint16_t)(unsigned char)cmdline[i];
    if (create)
        sqfw_process_created(core, &(sqfw_process_info){.process_key = SQFW_PROCESS_KEY(pid, 0), .image = pi.image,
                                                        .image_chars = pi.image_bytes / 2, .cmdline = pi.cmdline,
                                                        .cmdline_chars = pi.cmdline_bytes / 2, .pid = pid},
                             2);
    else
        sqfw_process_exited(core, SQFW_PROCESS_KEY(pid, 0));
    return ioctl(h, IOCTL_STANDIN_PROCESS, &pi, sizeof pi, NULL, 0, NULL);
}

/* Split svchost instances attributed to their service by the driver's own
 * process table, with the workstation policy in enforce mode (Dnscache to
 * port 53 by setting): DNS from svchost works without the agent. */
static void service_checks(HANDLE h)
{
    sq_counts c = counts(h);
    CHECK("the driver registered one process notify", c.process_notify_set == 1 && c.process_notify_removed == 0);
    char svchost[261] = {0};
    for (uint32_t i = 0; i < c.svchost_name_bytes / 2 && i < 260; i++)
        svchost[i] = (char)c.svchost_name[i];
    printf("  svchost.exe resolved by the driver as %s (open 0x%08x, name 0x%08x%s)\n", svchost,
           (unsigned)c.svchost_open_status, (unsigned)c.svchost_status,
           c.svchost_name_supplied ? "; the name is the stand-in's (Wine 8.0 has none for it)" : "");
    if (c.svchost_root_supplied || c.svchost_object_supplied)
        printf("  (Wine 8.0 lacks the parts: no \\SystemRoot link, the stand-in opened it through C:\\windows%s)\n",
               c.svchost_object_supplied ? "; it crashes referencing a file handle, the stand-in gave an object" : "");
    CHECK("the driver resolved \\SystemRoot's svchost.exe to an object name", c.svchost_name_bytes > 0);
    uint16_t wide[261];
    for (size_t i = 0; i <= strlen(svchost); i++)
        wide[i] = (uint16_t)(unsigned char)svchost[i];
    sqfw_set_svchost_path(core, wide, (uint32_t)strlen(svchost));

    const uint32_t DNS = 0x0A000035u; /* 10.0.0.53 */
    sq_classify_out o = classify(h, SQ_C_CONNECT_V4, 48, svchost, 4300, 17, DNS, 53, 50100, 0, 0);
    CHECK("DNS from svchost before its create notify: blocked like the core",
          o.action == ACTION_BLOCK && core_verdict(svchost, 4300, SQFW_DIR_OUTBOUND, 17, DNS, 53, 50100) == SQFW_BLOCK);
    CHECK("create notify of svchost -s Dnscache delivered",
          process_event(h, 1, 4300, svchost, "C:\\windows\\system32\\svchost.exe -k NetworkService -p -s Dnscache") ==
              0);
    drain_events(h, NULL);
    memset(&last_allowed, 0, sizeof last_allowed);
    o = classify(h, SQ_C_CONNECT_V4, 48, svchost, 4300, 17, DNS, 53, 50101, 0, 0);
    CHECK("DNS from the Dnscache svchost permitted in enforce mode, as the core decides",
          o.action == ACTION_PERMIT && core_verdict(svchost, 4300, SQFW_DIR_OUTBOUND, 17, DNS, 53, 50101) == SQFW_ALLOW);
    drain_events(h, NULL);
    const sqfw_event *al = &last_allowed;
    CHECK("the driver logged it (ALLOWED) with its tuple: 10.0.0.5:50101 -> 10.0.0.53:53 UDP, pid, image",
          al->pid == 4300 && al->protocol == 17 && al->local_port == 50101 && al->remote_port == 53 &&
              al->local_addr[0] == 10 && al->local_addr[3] == 5 && al->remote_addr[3] == 53 &&
              al->path_len == strlen(svchost) && al->reason == SQFW_R_DNS_CLIENT);
    o = classify(h, SQ_C_CONNECT_V4, 48, svchost, 4300, 17, DNS, 5353, 50102, 0, 0);
    CHECK("the same service to another port blocked like the core",
          o.action == ACTION_BLOCK && core_verdict(svchost, 4300, SQFW_DIR_OUTBOUND, 17, DNS, 5353, 50102) == SQFW_BLOCK);
    sqfw_stats s = stats(h);
    CHECK("driver stats: one process tracked, hosting one service",
          s.processes_tracked == 1 && s.processes_services == 1 && s.processes_refused == 0);

    const char *fake = "\\device\\harddiskvolume2\\users\\x\\svchost.exe";
    process_event(h, 1, 4301, fake, "svchost.exe -k NetworkService -s Dnscache");
    o = classify(h, SQ_C_CONNECT_V4, 48, fake, 4301, 17, DNS, 53, 50103, 0, 0);
    CHECK("a copy of svchost elsewhere claiming Dnscache: blocked like the core",
          o.action == ACTION_BLOCK && core_verdict(fake, 4301, SQFW_DIR_OUTBOUND, 17, DNS, 53, 50103) == SQFW_BLOCK);

    CHECK("exit notify delivered", process_event(h, 0, 4300, "", "") == 0 && process_event(h, 0, 4301, "", "") == 0);
    o = classify(h, SQ_C_CONNECT_V4, 48, svchost, 4300, 17, DNS, 53, 50104, 0, 0);
    CHECK("after its exit the pid is svchost.exe alone again: blocked", o.action == ACTION_BLOCK);
    CHECK("driver stats: no process left", stats(h).processes_tracked == 0);
}

static void core_install(const UINT8 *blob, DWORD len)
{
    size_t need = 0;
    uint32_t off = 0;
    sqfw_policy *p = NULL, *old = NULL;
    if (sqfw_policy_arena_size(blob, len, &need, &off) == SQFW_OK &&
        sqfw_policy_compile(blob, len, malloc(need), need, &p, &off) == SQFW_OK)
        sqfw_engine_install(core, p, 3, &old);
}

/* A policy that revokes an application re-authorises the open connections:
 * the driver deletes and re-adds its connect and accept filters in one
 * transaction (WFP then classifies every open connection again with
 * FWP_CONDITION_FLAG_IS_REAUTHORIZE, which the stand-in cannot do, so the
 * harness makes that classify) and the revoked one is blocked. */
static void reauth_checks(HANDLE h)
{
    char svchost[261] = {0};
    sq_counts c = counts(h);
    for (uint32_t i = 0; i < c.svchost_name_bytes / 2 && i < 260; i++)
        svchost[i] = (char)c.svchost_name[i];
    const uint32_t DNS = 0x0A000035u;
    process_event(h, 1, 4400, svchost, "svchost.exe -k NetworkService -p -s Dnscache");
    sq_classify_out o = classify(h, SQ_C_CONNECT_V4, 48, svchost, 4400, 17, DNS, 53, 50200, 0, 0);
    CHECK("DNS client connected under the workstation policy", o.action == ACTION_PERMIT);

    DWORD len_rv = 0;
    UINT8 *revoke = read_file("revoke-dns.bin", &len_rv);
    sqfw_set_policy_out res;
    sq_counts c0 = counts(h);
    CHECK("a policy without the DNS client accepted",
          revoke && push(h, revoke, len_rv, &res) == 0 && res.status == SQFW_OK && stats(h).policy_serial == 43);
    sq_counts c1 = counts(h);
    CHECK("re-authorisation forced: the 4 connect/accept filters deleted and added again, ids the driver was given",
          c1.filters_deleted == c0.filters_deleted + 4 && c1.filters_added == c0.filters_added + 4 &&
              c1.filter_delete_unknown == 0);
    if (revoke)
        core_install(revoke, len_rv);
    o = classify(h, SQ_C_CONNECT_V4, 48, svchost, 4400, 17, DNS, 53, 50200, 1, 0);
    CHECK("the open DNS connection re-authorised and blocked, as the core decides under the new policy",
          o.action == ACTION_BLOCK && core_verdict(svchost, 4400, SQFW_DIR_OUTBOUND, 17, DNS, 53, 50200) == SQFW_BLOCK);

    UINT8 *bad = malloc(len_ws);
    memcpy(bad, blob_ws, len_ws);
    bad[0] ^= 0xFF;
    c0 = counts(h);
    push(h, bad, len_ws, &res);
    c1 = counts(h);
    CHECK("a refused policy forces no re-authorisation",
          res.status != SQFW_OK && c1.filters_deleted == c0.filters_deleted && c1.filters_added == c0.filters_added);
    free(bad);
    free(revoke);
    CHECK("workstation back", push(h, blob_ws, len_ws, &res) == 0 && res.status == SQFW_OK);
    core_install(blob_ws, len_ws);
    process_event(h, 0, 4400, "", "");
}

static int svc_wait(SC_HANDLE svc, DWORD want)
{
    SERVICE_STATUS st;
    for (int i = 0; i < 500; i++) {
        if (QueryServiceStatus(svc, &st) && st.dwCurrentState == want)
            return 1;
        Sleep(10);
    }
    return 0;
}

static int log_lines(int *leaky, int *bad_counts, char *last, size_t last_cap)
{
    FILE *f = fopen("C:\\sqfw-standin.log", "rb");
    int n = 0;
    *leaky = *bad_counts = 0;
    if (!f)
        return 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        n++;
        if (!strstr(line, "leak=0\r") && !strstr(line, "leak=0\n"))
            (*leaky)++;
        if (strncmp(line, "unload", 6) == 0 &&
            (!strstr(line, "registered=10 unregistered=10") || !strstr(line, "pnotify=1/1") ||
             !strstr(line, "bfe=1/1") || !etw_balance_ok(line)))
            (*bad_counts)++;
        snprintf(last, last_cap, "%s", line);
    }
    fclose(f);
    return n;
}

/* the per-packet transport path: its own file */
#include "harness_shaper.c"
/* the IPv6 classifies, on harness_shaper.c's replica and requests */
#include "harness_v6.c"

static void loop(int cycles)
{
    SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_ALL_ACCESS);
    SC_HANDLE svc = scm ? OpenServiceW(scm, L"sieveqfw", SERVICE_ALL_ACCESS) : NULL;
    CHECK("service opened", svc != NULL);
    if (!svc)
        return;
    char last[512] = "";
    int leaky, bad, before = log_lines(&leaky, &bad, last, sizeof last);

    /* a start whose fourth callout registration fails: the driver must undo the first three */
    FILE *flag = fopen("C:\\sqfw-fail-register", "wb");
    if (flag)
        fclose(flag);
    BOOL started = StartServiceW(svc, 0, NULL);
    CHECK("start with a failing registration fails", !started);
    svc_wait(svc, SERVICE_STOPPED);
    Sleep(200);
    int after = log_lines(&leaky, &bad, last, sizeof last);
    CHECK("failed start undid its registrations (stand-in balances)", after == before + 1 && leaky == 0);
    if (after == before + 1)
        printf("  failed start: %s", last);
    DeleteFileA("C:\\sqfw-fail-register");

    /* a load before BFE runs, then BFE starting, stopping and starting again:
     * the driver follows its state instead of depending on the service */
    flag = fopen("C:\\sqfw-bfe-stopped", "wb");
    if (flag)
        fclose(flag);
    started = StartServiceW(svc, 0, NULL) && svc_wait(svc, SERVICE_RUNNING);
    CHECK("the driver loads while BFE is stopped", started);
    HANDLE hb = started ? open_raw() : INVALID_HANDLE_VALUE;
    if (hb != INVALID_HANDLE_VALUE) {
        sq_counts b0 = counts(hb);
        CHECK("before BFE: callouts registered, subscribed to BFE, no session and no filter",
              b0.callouts_registered == 10 && b0.bfe_subscribed == 1 && b0.engine_open == 0 && b0.filters_added == 0);
        UINT32 state = 3; /* FWPM_SERVICE_RUNNING */
        ioctl(hb, IOCTL_STANDIN_BFE, &state, sizeof state, NULL, 0, NULL);
        sq_counts b1 = counts(hb);
        CHECK("BFE running: the session, sublayer, 10 callouts and 10 filters added",
              b1.engine_open == 1 && b1.sublayers_added == 1 && b1.callouts_added == 10 && b1.filters_added == 10);
        state = 2; /* FWPM_SERVICE_STOP_PENDING */
        ioctl(hb, IOCTL_STANDIN_BFE, &state, sizeof state, NULL, 0, NULL);
        CHECK("BFE stopping: the session closed", counts(hb).engine_close == 1);
        state = 3;
        ioctl(hb, IOCTL_STANDIN_BFE, &state, sizeof state, NULL, 0, NULL);
        sq_counts b2 = counts(hb);
        CHECK("BFE back: a new session with its filters", b2.engine_open == 2 && b2.filters_added == 20);
        CloseHandle(hb);
    }
    SERVICE_STATUS sst;
    ControlService(svc, SERVICE_CONTROL_STOP, &sst);
    svc_wait(svc, SERVICE_STOPPED);
    DeleteFileA("C:\\sqfw-bfe-stopped");
    Sleep(200);
    int after_bfe = log_lines(&leaky, &bad, last, sizeof last);
    CHECK("that unload balanced too (session, subscription)", after_bfe == after + 1 && leaky == 0 &&
                                                                  strstr(last, "bfe=1/1") && strstr(last, "engine=2/2"));
    after = after_bfe;

    /* a kernel without the ETW routines (MmGetSystemRoutineAddress finds
     * none): the driver runs untraced, takes policies, and unloads clean */
    flag = fopen("C:\\sqfw-etw-absent", "wb");
    if (flag)
        fclose(flag);
    started = StartServiceW(svc, 0, NULL) && svc_wait(svc, SERVICE_RUNNING);
    CHECK("the driver loads without the kernel's ETW routines", started);
    HANDLE he = started ? open_device() : INVALID_HANDLE_VALUE;
    sqfw_set_policy_out eres;
    CHECK("untraced, it takes a policy", he != INVALID_HANDLE_VALUE && push(he, blob_ws, len_ws, &eres) == 0 &&
                                             eres.status == SQFW_OK);
    if (he != INVALID_HANDLE_VALUE)
        CloseHandle(he);
    ControlService(svc, SERVICE_CONTROL_STOP, &sst);
    svc_wait(svc, SERVICE_STOPPED);
    DeleteFileA("C:\\sqfw-etw-absent");
    Sleep(200);
    int after_etw = log_lines(&leaky, &bad, last, sizeof last);
    CHECK("that unload balanced, no ETW registration made (etw=0/0)", after_etw == after + 1 && leaky == 0 &&
                                                                           strstr(last, " etw=0/0 (absent) ") &&
                                                                           strstr(last, "registered=10 unregistered=10"));
    after = after_etw;

    int ok_cycles = 0;
    DWORD t0 = GetTickCount();
    const char *failed_step = NULL;
    DWORD failed_error = 0;
    for (int i = 0; i < cycles && !failed_step; i++) {
        if (!StartServiceW(svc, 0, NULL)) {
            failed_step = "StartService";
        } else if (!svc_wait(svc, SERVICE_RUNNING)) {
            failed_step = "waiting for RUNNING";
        }
        if (failed_step) {
            failed_error = GetLastError();
            break;
        }
        HANDLE h = open_device();
        sqfw_set_policy_out res;
        int pushed = h != INVALID_HANDLE_VALUE && push(h, (i & 1) ? blob_min : blob_ws, (i & 1) ? len_min : len_ws,
                                                       &res) == 0 && res.status == SQFW_OK;
        if (h != INVALID_HANDLE_VALUE)
            CloseHandle(h);
        SERVICE_STATUS st;
        if (!ControlService(svc, SERVICE_CONTROL_STOP, &st)) {
            failed_step = "ControlService(STOP)";
        } else if (!svc_wait(svc, SERVICE_STOPPED)) {
            failed_step = "waiting for STOPPED";
        } else if (!pushed) {
            failed_step = h == INVALID_HANDLE_VALUE ? "opening the device" : "pushing a policy";
        }
        if (failed_step) {
            failed_error = GetLastError();
            break;
        }
        ok_cycles++;
        /* progress, so that a run cut short by run.sh's bound shows how far it got and at what pace */
        if (ok_cycles % 25 == 0 && ok_cycles < cycles) {
            printf("  %d of %d cycles after %lu ms\n", ok_cycles, cycles, (unsigned long)(GetTickCount() - t0));
            fflush(stdout);
        }
    }
    DWORD ms = GetTickCount() - t0;
    if (failed_step)
        printf("  cycle %d failed at %s (error %lu)\n", ok_cycles + 1, failed_step, (unsigned long)failed_error);
    CHECK("every load/push/unload cycle completed", ok_cycles == cycles);
    printf("  %d load/unload cycles in %lu ms\n", ok_cycles, (unsigned long)ms);
    Sleep(100);
    int total = log_lines(&leaky, &bad, last, sizeof last);
    CHECK("one balance line per unload", total == after + cycles);
    CHECK("no unload left a registration, context, pend, clone, handle or pool block behind", leaky == 0);
    CHECK("every unload unregistered all 10 callouts, its process notify and its BFE subscription", bad == 0);
    printf("  last unload: %s", last);
    shaper_unload_check(svc);
    CloseServiceHandle(svc);
    CloseServiceHandle(scm);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: harness GOLDEN_DIR [--loop N]\n");
        return 2;
    }
    golden_dir = argv[1];
    blob_ws = read_file("workstation.bin", &len_ws);
    blob_min = read_file("minimal.bin", &len_min);
    CHECK("golden blobs read", blob_ws && blob_min);
    if (!blob_ws || !blob_min)
        goto done;
    if (argc >= 4 && strcmp(argv[2], "--loop") == 0) {
        boot_checks(&passed, &failed);
        loop(atoi(argv[3]));
        goto done;
    }
    HANDLE h = open_raw();
    CHECK("device opened", h != INVALID_HANDLE_VALUE);
    if (h == INVALID_HANDLE_VALUE)
        goto done;
    handshake(h);
    security(h);
    contract(h);
    classify_checks(h);
    etw_checks(h, etw_check);
    service_checks(h);
    reauth_checks(h);
    v6_checks(h); /* before shaper_checks: it leaves packets deferred for the unload */
    total_bound_checks(h); /* before shaper_checks, which leaves packets deferred */
    shaper_checks(h);
    cleanup_check(h);
done:
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
