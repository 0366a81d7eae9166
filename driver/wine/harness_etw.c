/* TEST ONLY (part of the Wine harness): the driver's ETW provider, as the
 * stand-in's recorders saw it. The events are decoded here from the
 * TraceLogging format as documented (provider and event metadata, then the
 * payload by each field's InType), without the driver's encoder, and
 * compared with the connections the harness drove through the classify
 * functions. */
#include <windows.h>
#include <stdio.h>
#include <string.h>

#include "../core/sqfw.h"
#include "../core/trace_meta.h" /* the provider's name and GUID text only */
#include "../wfp/sqfw_ioctl.h"
#include "harness_etw.h"
#include "standin_etw.h"
#include "standin_ioctl.h"

#define CHECK(what, cond) check(what, (cond) ? 1 : 0, __LINE__)
static etw_check_fn check;

#define AGENT_PATH "\\device\\harddiskvolume2\\program files\\sieveq\\agent.exe"
#define OTHER_PATH "\\device\\harddiskvolume2\\windows\\notepad.exe"
#define REMOTE 0x0A140101u /* 10.20.1.1, in the agent's rule */

static int ioctl_(HANDLE h, DWORD code, const void *in, DWORD in_len, void *out, DWORD out_len)
{
    DWORD got = 0;
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
    BOOL ok = DeviceIoControl(h, code, (void *)in, in_len, out, out_len, &got, &ov);
    if (!ok && GetLastError() == ERROR_IO_PENDING)
        ok = GetOverlappedResult(h, &ov, &got, TRUE);
    CloseHandle(ov.hEvent);
    return ok ? 0 : -1;
}

static uint32_t connect_(HANDLE h, const char *path, uint32_t pid, uint16_t lport)
{
    sq_classify_in ci;
    memset(&ci, 0, sizeof ci);
    ci.callout = SQ_C_CONNECT_V4, ci.layer_id = 48, ci.protocol = 6;
    ci.local_addr = 0x0A000005u, ci.remote_addr = REMOTE, ci.local_port = lport, ci.remote_port = 443;
    ci.pid = pid, ci.if_index = 7, ci.sub_if_index = 3, ci.ip_header_size = 20, ci.transport_header_size = 20;
    size_t n = strlen(path);
    for (size_t i = 0; i < n; i++)
        ci.path[i] = (uint16_t)(unsigned char)path[i];
    ci.path_bytes = (uint32_t)(2 * n);
    sq_classify_out co;
    memset(&co, 0, sizeof co);
    if (ioctl_(h, IOCTL_STANDIN_CLASSIFY, &ci, sizeof ci, &co, sizeof co) != 0)
        return 0;
    return co.action;
}

static sq_etw_state state(HANDLE h)
{
    sq_etw_state s;
    memset(&s, 0, sizeof s);
    ioctl_(h, IOCTL_STANDIN_ETW_STATE, NULL, 0, &s, sizeof s);
    return s;
}

static int enable(HANDLE h, uint32_t control, uint8_t level, uint64_t any)
{
    sq_etw_enable e;
    memset(&e, 0, sizeof e);
    e.control = control, e.level = level, e.any = any;
    return ioctl_(h, IOCTL_STANDIN_ETW_ENABLE, &e, sizeof e, NULL, 0);
}

/* ---- the decoder ---- */
typedef struct dfield {
    const char *name;
    uint8_t in, out;
    const uint8_t *val; /* for counted types: the bytes after the UINT16 count */
    uint32_t len;
} dfield;

typedef struct devent {
    const char *provider;
    const char *name;
    int n;
    dfield f[32];
} devent;

/* A NUL-terminated string inside [p, end): returns what follows, NULL when unterminated. */
static const uint8_t *cstr(const uint8_t *p, const uint8_t *end, const char **s)
{
    const uint8_t *q = memchr(p, 0, (size_t)(end - p));
    *s = (const char *)p;
    return q ? q + 1 : NULL;
}

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const uint8_t *p) { return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16; }
static uint64_t u64(const uint8_t *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

/* Returns 0 on success, else the step that failed. */
static int decode(const sq_etw_record *r, devent *d)
{
    memset(d, 0, sizeof *d);
    if (r->n_desc != 3 || r->desc_type[0] != 2 || r->desc_type[1] != 1 || r->desc_type[2] != 0)
        return 1;
    const uint8_t *pm = r->data, *em = pm + r->desc_size[0], *pl = em + r->desc_size[1];
    const uint8_t *end = pl + r->desc_size[2];
    if (end > r->data + r->data_len)
        return 2;
    /* provider metadata: UINT16 size, name NUL (traits would follow) */
    if (r->desc_size[0] < 3 || u16(pm) != r->desc_size[0] || !cstr(pm + 2, em, &d->provider))
        return 3;
    /* event metadata: UINT16 size, tags (7 bits a byte, 0x80 chains), name NUL, fields */
    if (r->desc_size[1] < 4 || u16(em) != r->desc_size[1])
        return 4;
    const uint8_t *p = em + 2;
    while (p < pl && (*p & 0x80))
        p++;
    p++;
    if (p >= pl || !(p = cstr(p, pl, &d->name)))
        return 5;
    while (p < pl) {
        if (d->n == 32)
            return 6;
        dfield *f = &d->f[d->n++];
        if (!(p = cstr(p, pl, &f->name)) || p >= pl)
            return 7;
        f->in = *p & 0x7F;
        if (*p++ & 0x80) { /* an OutType follows; its 0x80 chains field tags */
            if (p >= pl)
                return 8;
            f->out = *p & 0x7F;
            if (*p++ & 0x80) {
                while (p < pl && (*p & 0x80))
                    p++;
                p++;
            }
        }
    }
    /* payload, field by field */
    const uint8_t *v = pl;
    for (int i = 0; i < d->n; i++) {
        dfield *f = &d->f[i];
        uint32_t size;
        switch (f->in) {
        case 3: case 4: size = 1; break;         /* INT8, UINT8 */
        case 5: case 6: size = 2; break;         /* INT16, UINT16 */
        case 7: case 8: case 13: size = 4; break; /* INT32, UINT32, BOOL32 */
        case 9: case 10: size = 8; break;        /* INT64, UINT64 */
        case 14: case 22: case 23: case 25:      /* BINARY, counted strings: UINT16 count first */
            if (end - v < 2)
                return 9;
            size = u16(v);
            v += 2;
            break;
        default:
            return 10;
        }
        if ((uint32_t)(end - v) < size)
            return 11;
        f->val = v, f->len = size;
        v += size;
    }
    return v == end ? 0 : 12;
}

static const dfield *field(const devent *d, const char *name)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->f[i].name, name) == 0)
            return &d->f[i];
    return NULL;
}

static uint64_t num(const devent *d, const char *name)
{
    const dfield *f = field(d, name);
    if (!f)
        return 0xDEADBEEFull;
    return f->len == 1 ? f->val[0] : f->len == 2 ? u16(f->val) : f->len == 4 ? u32(f->val) : u64(f->val);
}

static int str_is(const devent *d, const char *name, const char *want)
{
    const dfield *f = field(d, name);
    return f && f->len == strlen(want) && memcmp(f->val, want, f->len) == 0;
}

/* SOCKADDR_IN: family 2 (LE), port (BE), address */
static int sockaddr_is(const devent *d, const char *name, uint32_t addr, uint16_t port)
{
    const dfield *f = field(d, name);
    return f && f->out == 10 /* SOCKETADDRESS */ && f->len == 16 && u16(f->val) == 2 &&
           (f->val[2] << 8 | f->val[3]) == port && (uint32_t)(f->val[4] << 24 | f->val[5] << 16 | f->val[6] << 8 |
                                                              f->val[7]) == addr;
}

static int record(HANDLE h, uint32_t i, sq_etw_record *r)
{
    return ioctl_(h, IOCTL_STANDIN_ETW_EVENT, &i, sizeof i, r, sizeof *r);
}

/* The tuple, process and image of a connect the harness drove. */
static int is_connect(const devent *d, const char *path, uint32_t pid, uint16_t lport)
{
    return num(d, "Direction") == SQFW_DIR_OUTBOUND && num(d, "Protocol") == 6 &&
           sockaddr_is(d, "LocalAddress", 0x0A000005u, lport) && num(d, "LocalPort") == lport &&
           sockaddr_is(d, "RemoteAddress", REMOTE, 443) && num(d, "RemotePort") == 443 &&
           num(d, "ProcessId") == pid && num(d, "ProcessKey") == SQFW_PROCESS_KEY(pid, 0) &&
           str_is(d, "Application", path) && num(d, "ApplicationTruncated") == 0 && field(d, "User") &&
           field(d, "User")->len <= SQFW_EVENT_USER_MAX;
}

static void guid_bytes(uint8_t out[16])
{
    unsigned a, b, c, x[8];
    sscanf(SQ_TLG_PROVIDER_GUID_TEXT, "%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x", &a, &b, &c, &x[0], &x[1], &x[2],
           &x[3], &x[4], &x[5], &x[6], &x[7]);
    uint8_t g[16] = {(uint8_t)a, (uint8_t)(a >> 8), (uint8_t)(a >> 16), (uint8_t)(a >> 24), (uint8_t)b,
                     (uint8_t)(b >> 8), (uint8_t)c, (uint8_t)(c >> 8)};
    for (int i = 0; i < 8; i++)
        g[8 + i] = (uint8_t)x[i];
    memcpy(out, g, 16);
}

void etw_checks(HANDLE h, etw_check_fn fn)
{
    check = fn;
    sq_etw_state s = state(h);
    uint8_t g[16];
    guid_bytes(g);
    CHECK("ETW: the driver found its Etw* routines and registered one provider, with its GUID",
          s.lookups_answered == 4 && s.registered == 1 && s.unregistered == 0 && memcmp(s.provider_guid, g, 16) == 0);
    CHECK("ETW: provider traits set: UINT16 size, \"SieveQ-Firewall\", NUL",
          s.traits_set == 1 && s.traits_len == 18 && u16(s.traits) == 18 &&
              memcmp(s.traits + 2, SQ_TLG_PROVIDER_NAME, 16) == 0);

    /* nobody listens: nothing written */
    uint64_t w0 = s.writes;
    CHECK("ETW: blocked connect (not enabled)", connect_(h, OTHER_PATH, 4000, 50020) == 0x1001u);
    CHECK("ETW: a provider nobody enabled writes nothing", state(h).writes == w0);

    /* a session for blocks and allows, verbose */
    CHECK("ETW: session enables blocks and allows", enable(h, 1, 5, SQ_TLG_KW_BLOCKED | SQ_TLG_KW_ALLOWED) == 0);
    uint32_t blocked = connect_(h, OTHER_PATH, 4000, 50021);
    uint32_t allowed = connect_(h, AGENT_PATH, 4100, 50022);
    CHECK("ETW: a blocked and an allowed connect", blocked == 0x1001u && allowed == 0x1002u);
    s = state(h);
    CHECK("ETW: two events written", s.records == 2 && s.writes == w0 + 2);
    sq_etw_record r;
    devent d;
    int rc = record(h, 0, &r) == 0 ? decode(&r, &d) : -1;
    if (rc)
        printf("  ETW: first event did not decode (step %d)\n", rc);
    CHECK("ETW: the block decodes: TraceLogging channel 11, warning, keyword 0x2, provider SieveQ-Firewall",
          rc == 0 && r.channel == 11 && r.level == 3 && r.keyword == SQ_TLG_KW_BLOCKED && r.id == 0 &&
              strcmp(d.provider, SQ_TLG_PROVIDER_NAME) == 0 && strcmp(d.name, "ConnectionBlocked") == 0);
    CHECK("ETW: its fields are the connect's: TCP 10.0.0.5:50021 -> 10.20.1.1:443 outbound, pid 4000, image",
          rc == 0 && is_connect(&d, OTHER_PATH, 4000, 50021));
    CHECK("ETW: its reason is an unknown application, no rule",
          rc == 0 && num(&d, "Reason") == SQFW_R_UNKNOWN_APP && num(&d, "RuleId") == 0);
    rc = record(h, 1, &r) == 0 ? decode(&r, &d) : -1;
    if (rc)
        printf("  ETW: second event did not decode (step %d)\n", rc);
    CHECK("ETW: the allow decodes: verbose, keyword 0x1, ConnectionAllowed",
          rc == 0 && r.channel == 11 && r.level == 5 && r.keyword == SQ_TLG_KW_ALLOWED &&
              strcmp(d.name, "ConnectionAllowed") == 0);
    CHECK("ETW: its fields are the agent's connect, allowed by a rule",
          rc == 0 && is_connect(&d, AGENT_PATH, 4100, 50022) && num(&d, "Reason") == SQFW_R_RULE &&
              num(&d, "RuleId") != 0 && num(&d, "IdentityId") != 0);

    /* only blocks: the allowed connect writes nothing */
    enable(h, 1, 5, SQ_TLG_KW_BLOCKED);
    connect_(h, OTHER_PATH, 4000, 50023);
    connect_(h, AGENT_PATH, 4100, 50024);
    s = state(h);
    rc = s.records == 1 && record(h, 0, &r) == 0 ? decode(&r, &d) : -1;
    CHECK("ETW: keyword 0x2 only: the block written, the allow not",
          rc == 0 && strcmp(d.name, "ConnectionBlocked") == 0 && is_connect(&d, OTHER_PATH, 4000, 50023));

    /* a level under the events' */
    enable(h, 1, 2 /* error */, ~0ull);
    connect_(h, OTHER_PATH, 4000, 50025);
    CHECK("ETW: a session at level error gets no warning-level block", state(h).records == 0);

    /* disabled again */
    enable(h, 0, 0, 0);
    w0 = state(h).writes;
    connect_(h, OTHER_PATH, 4000, 50026);
    connect_(h, AGENT_PATH, 4100, 50027);
    CHECK("ETW: disabled: nothing written", state(h).writes == w0 && state(h).records == 0);
}

int etw_balance_ok(const char *unload_line)
{
    /* registered and unregistered once; or, in the load that ran without
     * the kernel's ETW routines, never registered at all */
    return strstr(unload_line, " etw=1/1 ") != NULL || strstr(unload_line, " etw=0/0 (absent) ") != NULL;
}
