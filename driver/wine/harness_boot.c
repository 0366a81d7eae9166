/* TEST ONLY: IOCTL_SQFW_SET_BOOT_FILTERS against the real driver, the
 * stand-in's BFE store (wine/standin_boot.c) read back after each step.
 *
 * The expected filters are written out here, independently of
 * core/boot_rules.c: layer, action, weight and conditions of each, matched
 * as a set. Checked: on → exactly that set, boot-time (not persistent) under
 * the persistent provider and sublayer, in one committed transaction; on
 * again → the same keys, no duplicate; the driver unloaded and loaded → still
 * there; a filter add failing part way → the transaction aborted, BFE's store
 * as it was (on or off), the failure reported; BFE stopped → refused as
 * such, nothing changed; malformed requests refused; off → nothing left. */
#include <windows.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/boot_rules.h"
#include "../wfp/sqfw_ioctl.h"
#include "harness_boot.h"
#include "standin_boot_ioctl.h"

static int *n_pass, *n_fail;
#define CHECK(what, cond)                                                                                              \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            (*n_pass)++;                                                                                               \
        } else {                                                                                                       \
            (*n_fail)++;                                                                                               \
            printf("FAIL %s (harness_boot.c:%d, last error %lu)\n", what, __LINE__, (unsigned long)GetLastError());   \
        }                                                                                                              \
    } while (0)

#define NOT_READY 0xC00000A3u  /* STATUS_DEVICE_NOT_READY */
#define INJECTED 0xC000009Au   /* STATUS_INSUFFICIENT_RESOURCES, the stand-in's injected failure */
#define BOOTTIME 2u
#define PERSISTENT 1u
#define A_BLOCK 0x1001u
#define A_PERMIT 0x1002u

/* FWPM_LAYER_ALE_AUTH_CONNECT_V4, _V6, RECV_ACCEPT_V4, _V6 */
static const GUID layer[4] = {
    {0xc38d57d1, 0x05a7, 0x4c33, {0x90, 0x4f, 0x7f, 0xbc, 0xee, 0xe6, 0x0e, 0x82}},
    {0x4a72393b, 0x319f, 0x44bc, {0x84, 0xc3, 0xba, 0x54, 0xdc, 0xb3, 0xb6, 0xb4}},
    {0xe1cd9fe7, 0xf4b5, 0x4273, {0x96, 0xc0, 0x59, 0x2e, 0x48, 0x7b, 0x86, 0x50}},
    {0xa3b42c97, 0x9f04, 0x4672, {0xb8, 0x7e, 0xce, 0xe9, 0xc4, 0x83, 0x25, 0x7f}},
};
/* FWPM_CONDITION_FLAGS, IP_PROTOCOL, IP_LOCAL_PORT (= ICMP_TYPE), IP_REMOTE_PORT */
static const GUID field[4] = {
    {0x632ce23b, 0x5167, 0x435c, {0x86, 0xd7, 0xe9, 0x03, 0x68, 0x4a, 0xa8, 0x0c}},
    {0x3971ef2b, 0x623e, 0x4f9a, {0x8c, 0xb1, 0x6e, 0x79, 0xb8, 0x06, 0xb9, 0xa7}},
    {0x0c1ba1af, 0x5765, 0x453f, {0xaf, 0x22, 0xa8, 0xf7, 0x91, 0xac, 0x77, 0x5b}},
    {0xc35a604d, 0xd22b, 0x4e1a, {0x91, 0xb4, 0x68, 0xf6, 0x74, 0xee, 0x67, 0x4b}},
};
enum { F_FLAGS, F_PROTO, F_LPORT, F_RPORT };
/* FWP_UINT32 for flags with FWP_MATCH_FLAGS_ALL_SET, FWP_UINT8 protocol, FWP_UINT16 ports, FWP_MATCH_EQUAL */
static const uint32_t field_type[4] = {3, 1, 2, 2};

typedef struct want {
    int layer, permit, n;
    struct {
        int field;
        uint32_t value;
    } c[8];
} want;
#define CON4 0
#define CON6 1
#define ACC4 2
#define ACC6 3
static const want expected[] = {
    {CON4, 0, 0, {{0}}},
    {CON6, 0, 0, {{0}}},
    {ACC4, 0, 0, {{0}}},
    {ACC6, 0, 0, {{0}}},
    {CON4, 1, 1, {{F_FLAGS, 1}}},
    {CON6, 1, 1, {{F_FLAGS, 1}}},
    {ACC4, 1, 1, {{F_FLAGS, 1}}},
    {ACC6, 1, 1, {{F_FLAGS, 1}}},
    {CON4, 1, 3, {{F_PROTO, 17}, {F_LPORT, 68}, {F_RPORT, 67}}},
    {ACC4, 1, 3, {{F_PROTO, 17}, {F_LPORT, 68}, {F_RPORT, 67}}},
    {CON6, 1, 3, {{F_PROTO, 17}, {F_LPORT, 546}, {F_RPORT, 547}}},
    {ACC6, 1, 3, {{F_PROTO, 17}, {F_LPORT, 546}, {F_RPORT, 547}}},
    {CON4, 1, 3, {{F_PROTO, 17}, {F_PROTO, 6}, {F_RPORT, 53}}},
    {CON6, 1, 3, {{F_PROTO, 17}, {F_PROTO, 6}, {F_RPORT, 53}}},
    {CON6, 1, 7, {{F_PROTO, 58}, {F_LPORT, 133}, {F_LPORT, 134}, {F_LPORT, 135}, {F_LPORT, 136}, {F_LPORT, 131}, {F_LPORT, 143}}},
    {ACC6, 1, 5, {{F_PROTO, 58}, {F_LPORT, 133}, {F_LPORT, 134}, {F_LPORT, 135}, {F_LPORT, 136}}},
};
#define N_EXPECTED (sizeof expected / sizeof expected[0])

static SC_HANDLE svc;
static HANDLE dev = INVALID_HANDLE_VALUE;

static DWORD call(DWORD code, const void *in, DWORD in_len, void *out, DWORD out_len)
{
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
    DWORD n = 0, err = 0;
    if (!DeviceIoControl(dev, code, (void *)in, in_len, out, out_len, &n, &ov)) {
        err = GetLastError();
        if (err == ERROR_IO_PENDING)
            err = GetOverlappedResult(dev, &ov, &n, TRUE) ? 0 : GetLastError();
    }
    CloseHandle(ov.hEvent);
    return err;
}

static int wait_state(DWORD want_state)
{
    SERVICE_STATUS st;
    for (int i = 0; i < 500; i++) {
        if (QueryServiceStatus(svc, &st) && st.dwCurrentState == want_state)
            return 1;
        Sleep(10);
    }
    return 0;
}

static int start(void)
{
    if (!StartServiceW(svc, 0, NULL) || !wait_state(SERVICE_RUNNING))
        return 0;
    dev = CreateFileW(L"\\\\.\\SieveQFw", GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, FILE_FLAG_OVERLAPPED,
                      NULL);
    sqfw_hello_in hi = {SQFW_HELLO_MAGIC, SQFW_INTERFACE_VERSION};
    sqfw_version_info v;
    return dev != INVALID_HANDLE_VALUE && call(IOCTL_SQFW_HELLO, &hi, sizeof hi, &v, sizeof v) == 0;
}

static void stop(void)
{
    if (dev != INVALID_HANDLE_VALUE)
        CloseHandle(dev);
    dev = INVALID_HANDLE_VALUE;
    SERVICE_STATUS st;
    ControlService(svc, SERVICE_CONTROL_STOP, &st);
    wait_state(SERVICE_STOPPED);
    Sleep(100);
}

static DWORD set(uint32_t enable, sqfw_boot_filters_out *out)
{
    sqfw_boot_filters_in in = {SQFW_BOOT_MAGIC, enable, {0, 0}};
    memset(out, 0xEE, sizeof *out);
    return call(IOCTL_SQFW_SET_BOOT_FILTERS, &in, sizeof in, out, sizeof *out);
}

static sq_boot_state *state(void)
{
    static sq_boot_state s;
    memset(&s, 0xFF, sizeof s);
    sq_boot_ctl c = {SQ_BOOT_GET, 0};
    call(IOCTL_STANDIN_BOOT, &c, sizeof c, &s, sizeof s);
    return &s;
}

static void fail_filter_add(uint32_t nth)
{
    sq_boot_ctl c = {SQ_BOOT_FAIL_FILTER_ADD, nth};
    call(IOCTL_STANDIN_BOOT, &c, sizeof c, NULL, 0);
}

static int cond_matches(const sq_boot_filter *f, const want *w)
{
    if ((int)f->n_cond != w->n)
        return 0;
    int used[8] = {0};
    for (int k = 0; k < w->n; k++) {
        int hit = 0;
        for (uint32_t j = 0; j < f->n_cond && !hit; j++) {
            const sq_boot_cond *c = &f->cond[j];
            int fl = w->c[k].field;
            if (!used[j] && !memcmp(c->field, &field[fl], 16) && c->type == field_type[fl] &&
                c->match == (fl == F_FLAGS ? 6u : 0u) && c->value == w->c[k].value)
                used[j] = hit = 1;
        }
        if (!hit)
            return 0;
    }
    return 1;
}

/* the store holds exactly the expected filters, each once */
static int exact_set(const sq_boot_store *s)
{
    if (s->n_filters != N_EXPECTED)
        return 0;
    int taken[SQ_BOOT_MAX_FILTERS] = {0};
    for (size_t e = 0; e < N_EXPECTED; e++) {
        const want *w = &expected[e];
        int hit = 0;
        for (uint32_t i = 0; i < s->n_filters && !hit; i++) {
            const sq_boot_filter *f = &s->f[i];
            if (!taken[i] && !memcmp(f->layer, &layer[w->layer], 16) && f->action == (w->permit ? A_PERMIT : A_BLOCK) &&
                cond_matches(f, w))
                taken[i] = hit = 1;
        }
        if (!hit) {
            printf("  missing: expected filter %u (layer %d, %s, %d conditions)\n", (unsigned)e, w->layer,
                   w->permit ? "permit" : "block", w->n);
            return 0;
        }
    }
    return 1;
}

/* flags, provider, sublayer and weights as WFP must have them for boot time */
static int well_formed(const sq_boot_store *s)
{
    if (!s->has_provider || !(s->provider_flags & PERSISTENT) || !s->has_sublayer ||
        !(s->sublayer_flags & PERSISTENT) || !s->sublayer_has_provider ||
        memcmp(s->sublayer_provider, s->provider_key, 16))
        return 0;
    uint64_t max_block[4] = {0}, min_permit[4] = {~0ull, ~0ull, ~0ull, ~0ull};
    for (uint32_t i = 0; i < s->n_filters; i++) {
        const sq_boot_filter *f = &s->f[i];
        if (f->flags != BOOTTIME || !f->has_provider || memcmp(f->provider, s->provider_key, 16) ||
            memcmp(f->sublayer, s->sublayer_key, 16) || f->weight_type != 1 /* FWP_UINT8 */)
            return 0;
        for (int l = 0; l < 4; l++) {
            if (memcmp(f->layer, &layer[l], 16))
                continue;
            if (f->action == A_BLOCK && f->weight > max_block[l])
                max_block[l] = f->weight;
            if (f->action == A_PERMIT && f->weight < min_permit[l])
                min_permit[l] = f->weight;
        }
    }
    for (int l = 0; l < 4; l++)
        if (!(min_permit[l] > max_block[l]))
            return 0;
    return 1;
}

static int empty(const sq_boot_store *s)
{
    return s->n_filters == 0 && !s->has_provider && !s->has_sublayer;
}

/* same keys and, when ids is set, the same runtime ids: the objects untouched */
static int same_filters(const sq_boot_store *a, const sq_boot_store *b, int ids)
{
    if (a->n_filters != b->n_filters)
        return 0;
    for (uint32_t i = 0; i < a->n_filters; i++) {
        int hit = 0;
        for (uint32_t j = 0; j < b->n_filters && !hit; j++)
            hit = !memcmp(a->f[i].key, b->f[j].key, 16) && (!ids || a->f[i].id == b->f[j].id);
        if (!hit)
            return 0;
        for (uint32_t j = i + 1; j < a->n_filters; j++)
            if (!memcmp(a->f[i].key, a->f[j].key, 16))
                return 0;
    }
    return 1;
}

static void bfe(uint32_t st)
{
    call(IOCTL_STANDIN_BFE, &st, sizeof st, NULL, 0);
}

void boot_checks(int *passed, int *failed)
{
    n_pass = passed;
    n_fail = failed;
    SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_ALL_ACCESS);
    svc = scm ? OpenServiceW(scm, L"sieveqfw", SERVICE_ALL_ACCESS) : NULL;
    CHECK("boot filters: service opened and started", svc && start());
    if (dev == INVALID_HANDLE_VALUE)
        goto out;
    sqfw_boot_filters_out o;

    CHECK("boot filters off at first: answered, nothing stored",
          set(0, &o) == 0 && o.status == 0 && o.filters == 0 && empty(&state()->store));

    sq_boot_state s0 = *state();
    CHECK("on: answered with all 16 stored", set(1, &o) == 0 && o.status == 0 && o.enabled == 1 && o.filters == 16);
    sq_boot_state s1 = *state();
    CHECK("on: exactly the expected filters (loopback, DHCP, DHCPv6, DNS, ICMPv6 ND/MLD permits; a block per layer)",
          exact_set(&s1.store));
    CHECK("on: boot-time (not persistent) filters under the persistent provider and sublayer, permits above blocks",
          well_formed(&s1.store));
    CHECK("on: one committed transaction, nothing changed outside it, nothing refused, the session closed",
          s1.txn_begun == s0.txn_begun + 1 && s1.txn_committed == s0.txn_committed + 1 &&
              s1.txn_aborted == s0.txn_aborted && s1.changes_outside_txn == s0.changes_outside_txn &&
              s1.refused == s0.refused && s1.sessions_opened == s1.sessions_closed);

    CHECK("on again: answered", set(1, &o) == 0 && o.status == 0 && o.filters == 16);
    sq_boot_state s2 = *state();
    CHECK("on again: the same 16 keys, none twice", same_filters(&s1.store, &s2.store, 0) && exact_set(&s2.store) &&
                                                         s2.refused == s1.refused);

    stop();
    CHECK("driver loaded again", start());
    sq_boot_state s3 = *state();
    printf("  boot filters: stand-in loads %llu, filters read back from its store file %llu\n",
           (unsigned long long)s3.attaches, (unsigned long long)s3.loaded_filters);
    CHECK("an unload and a load leave them (BFE's store, not the driver's)",
          same_filters(&s2.store, &s3.store, 1) && exact_set(&s3.store) && well_formed(&s3.store));

    fail_filter_add(5);
    CHECK("on, the 5th filter add failing: the failure reported, nothing claimed",
          set(1, &o) == 0 && o.status == INJECTED && o.filters == SQFW_BOOT_UNCHANGED);
    sq_boot_state s4 = *state();
    CHECK("that transaction aborted: the stored filters untouched (same ids)",
          s4.injected_failures == s3.injected_failures + 1 && s4.txn_aborted == s3.txn_aborted + 1 &&
              s4.txn_committed == s3.txn_committed && same_filters(&s3.store, &s4.store, 1) && well_formed(&s4.store));

    CHECK("off: answered, none left", set(0, &o) == 0 && o.status == 0 && o.enabled == 0 && o.filters == 0);
    sq_boot_state s5 = *state();
    CHECK("off: no filter, sublayer or provider left, in one committed transaction",
          empty(&s5.store) && s5.txn_committed == s4.txn_committed + 1 && s5.changes_outside_txn == s4.changes_outside_txn);
    CHECK("off again: answered, still nothing", set(0, &o) == 0 && o.status == 0 && empty(&state()->store));

    s5 = *state();
    fail_filter_add(9);
    CHECK("from off, the 9th filter add failing: reported", set(1, &o) == 0 && o.status == INJECTED);
    sq_boot_state s6 = *state();
    CHECK("nothing half-added: no filter, sublayer or provider",
          empty(&s6.store) && s6.txn_aborted == s5.txn_aborted + 1 && s6.filter_adds == s5.filter_adds + 9);

    bfe(2); /* FWPM_SERVICE_STOP_PENDING */
    bfe(0); /* FWPM_SERVICE_STOPPED */
    sq_boot_state s7 = *state();
    CHECK("BFE stopped: the request answered as not ready, nothing changed",
          set(1, &o) == 0 && o.status == NOT_READY && o.filters == SQFW_BOOT_UNCHANGED && empty(&state()->store) &&
              state()->sessions_opened == s7.sessions_opened);
    bfe(3); /* FWPM_SERVICE_RUNNING */
    CHECK("BFE back: the same request succeeds", set(1, &o) == 0 && o.status == 0 && exact_set(&state()->store));

    sq_boot_state s8 = *state();
    sqfw_boot_filters_in bad = {SQFW_BOOT_MAGIC ^ 1, 0, {0, 0}};
    uint8_t longer[sizeof bad + 4] = {0};
    CHECK("a wrong magic refused", call(IOCTL_SQFW_SET_BOOT_FILTERS, &bad, sizeof bad, &o, sizeof o) == ERROR_INVALID_PARAMETER);
    bad.magic = SQFW_BOOT_MAGIC;
    bad.enable = 2;
    CHECK("enable 2 refused", call(IOCTL_SQFW_SET_BOOT_FILTERS, &bad, sizeof bad, &o, sizeof o) == ERROR_INVALID_PARAMETER);
    bad.enable = 0;
    bad.reserved[0] = 1;
    CHECK("a reserved word set refused", call(IOCTL_SQFW_SET_BOOT_FILTERS, &bad, sizeof bad, &o, sizeof o) == ERROR_INVALID_PARAMETER);
    bad.reserved[0] = 0;
    CHECK("a short request refused", call(IOCTL_SQFW_SET_BOOT_FILTERS, &bad, sizeof bad - 1, &o, sizeof o) == ERROR_INVALID_PARAMETER);
    memcpy(longer, &bad, sizeof bad);
    CHECK("a long request refused", call(IOCTL_SQFW_SET_BOOT_FILTERS, longer, sizeof longer, &o, sizeof o) == ERROR_INVALID_PARAMETER);
    CHECK("no room for the answer refused", call(IOCTL_SQFW_SET_BOOT_FILTERS, &bad, sizeof bad, &o, sizeof o - 1) == ERROR_INVALID_PARAMETER);
    sq_boot_state s9 = *state();
    CHECK("refused requests changed nothing (an off among them was not obeyed)",
          same_filters(&s8.store, &s9.store, 1) && s9.txn_begun == s8.txn_begun);

    CHECK("off at the end", set(0, &o) == 0 && o.status == 0 && empty(&state()->store));
    stop();
out:
    if (svc)
        CloseServiceHandle(svc);
    if (scm)
        CloseServiceHandle(scm);
}
