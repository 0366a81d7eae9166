/* Trace replay: synthetic connection attempts with process attributes,
 * each with the verdict the policy must give. Usage: replay FILE...
 * Format (one operation per line, key=value, values may be "quoted"):
 *   policy NAME                       load golden/NAME.bin
 *   attest key=K sha=HEX              agent answered a NEW_IDENTITY
 *   bind key=K service=NAME           svchost process hosts NAME
 *   level N                           QGuard level switch
 *   connect|explain t=MS key=K path=P [svc=S] [user=SID] dir=out|in proto=tcp|udp|N
 *           remote=ADDR port=N [flags=loopback,reauth] expect=VERDICT [reason=R] [rule=N] [identity=N] [class=N]
 *   flow id=F <connect fields>        flow established
 *   packet id=F t=MS bytes=N expect=VERDICT
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sqfw.h"
#include "blob_builder.h"
#include "fixture.h"

#define MAX_TOK 24

typedef struct tok {
    char key[32];
    char val[512];
} tok;

static int tokenize(char *line, char *op, size_t opsz, tok *t, int max)
{
    char *p = line;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p || *p == '#')
        return -1;
    size_t n = 0;
    while (*p && !isspace((unsigned char)*p) && n + 1 < opsz)
        op[n++] = *p++;
    op[n] = 0;
    int k = 0;
    while (*p && k < max) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            break;
        size_t kn = 0;
        while (*p && *p != '=' && !isspace((unsigned char)*p) && kn + 1 < sizeof t[k].key)
            t[k].key[kn++] = *p++;
        t[k].key[kn] = 0;
        size_t vn = 0;
        if (*p == '=') {
            p++;
            if (*p == '"') {
                p++;
                while (*p && *p != '"' && vn + 1 < sizeof t[k].val)
                    t[k].val[vn++] = *p++;
                if (*p == '"')
                    p++;
            } else {
                while (*p && !isspace((unsigned char)*p) && vn + 1 < sizeof t[k].val)
                    t[k].val[vn++] = *p++;
            }
        }
        t[k].val[vn] = 0;
        k++;
    }
    return k;
}

static const char *get(const tok *t, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].key, key))
            return t[i].val;
    return NULL;
}

static const char *verdict_names[] = {"?", "allow", "block", "pend", "defer"};
static const struct {
    const char *name;
    uint32_t code;
} reasons[] = {
    {"rule", SQFW_R_RULE}, {"no-rule", SQFW_R_NO_RULE}, {"unknown-app", SQFW_R_UNKNOWN_APP},
    {"needs-hash", SQFW_R_NEEDS_HASH}, {"hash-mismatch", SQFW_R_HASH_MISMATCH},
    {"user-mismatch", SQFW_R_USER_MISMATCH}, {"loopback", SQFW_R_LOOPBACK}, {"dns-client", SQFW_R_DNS_CLIENT},
    {"level", SQFW_R_LEVEL}, {"class-rate", SQFW_R_CLASS_RATE}, {"app-rate", SQFW_R_APP_RATE},
    {"syn-source", SQFW_R_SYN_SOURCE}, {"syn-unproven", SQFW_R_SYN_UNPROVEN}, {"pend-full", SQFW_R_PEND_FULL},
    {"pend-timeout", SQFW_R_PEND_TIMEOUT}, {"shaped", SQFW_R_SHAPED}, {"pass", SQFW_R_PASS},
};

static int reason_code(const char *s)
{
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (!strcmp(reasons[i].name, s))
            return (int)reasons[i].code;
    return -1;
}

static int verdict_code(const char *s)
{
    for (int i = 1; i < 5; i++)
        if (!strcmp(verdict_names[i], s))
            return i;
    return -1;
}

static int hexbytes(const char *s, uint8_t *out, size_t n)
{
    if (strlen(s) != 2 * n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return 0;
        out[i] = (uint8_t)v;
    }
    return 1;
}

static uint8_t *load(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "golden/%s.bin", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static int build_request(const tok *t, int n, sqfw_request *r)
{
    memset(r, 0, sizeof *r);
    const char *v;
    r->process_key = (v = get(t, n, "key")) ? strtoull(v, NULL, 0) : 1;
    r->pid = (uint32_t)r->process_key;
    if ((v = get(t, n, "path"))) {
        r->path = (const uint8_t *)v;
        r->path_len = (uint32_t)strlen(v);
    }
    if ((v = get(t, n, "svc"))) {
        r->service = (const uint8_t *)v;
        r->service_len = (uint32_t)strlen(v);
    }
    if ((v = get(t, n, "user"))) {
        r->user = (const uint8_t *)v;
        r->user_len = (uint32_t)strlen(v);
    }
    v = get(t, n, "dir");
    r->direction = v && !strcmp(v, "in") ? SQFW_DIR_INBOUND : SQFW_DIR_OUTBOUND;
    v = get(t, n, "proto");
    r->protocol = !v || !strcmp(v, "tcp") ? 6 : !strcmp(v, "udp") ? 17 : (uint8_t)atoi(v);
    if (!(v = get(t, n, "remote")) || !qb_parse_addr(v, &r->family, r->remote_addr))
        return 0;
    uint16_t port = (v = get(t, n, "port")) ? (uint16_t)atoi(v) : 0;
    if (r->direction == SQFW_DIR_INBOUND)
        r->local_port = port;
    else
        r->remote_port = port;
    if ((v = get(t, n, "flags"))) {
        if (strstr(v, "loopback"))
            r->flags |= SQFW_RF_LOOPBACK;
        if (strstr(v, "reauth"))
            r->flags |= SQFW_RF_REAUTH;
    }
    return 1;
}

/* Compares every expectation the line states; returns 1 when all hold. */
static int check(const char *file, int lineno, const tok *t, int n, const sqfw_decision *d)
{
    int ok = 1;
    const char *v;
    if ((v = get(t, n, "expect")) && verdict_code(v) != (int)d->verdict)
        ok = 0;
    if ((v = get(t, n, "reason")) && reason_code(v) != (int)d->reason)
        ok = 0;
    if ((v = get(t, n, "rule")) && (uint32_t)atoi(v) != d->rule_id)
        ok = 0;
    if ((v = get(t, n, "identity")) && (uint32_t)atoi(v) != d->identity_id)
        ok = 0;
    if ((v = get(t, n, "class")) && (uint32_t)atoi(v) != d->class_id)
        ok = 0;
    if (!ok) {
        const char *rn = "?";
        for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
            if (reasons[i].code == d->reason)
                rn = reasons[i].name;
        fprintf(stderr, "%s:%d: got %s reason=%s rule=%u identity=%u class=%u\n", file, lineno,
                d->verdict < 5 ? verdict_names[d->verdict] : "?", rn, d->rule_id, d->identity_id, d->class_id);
    }
    return ok;
}

int main(int argc, char **argv)
{
    int flows = 0, failed = 0;
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "r");
        if (!f) {
            perror(argv[a]);
            return 2;
        }
        fx_engine fx;
        sqfw_limits lim = fx_limits();
        fx_open(&fx, &lim);
        char line[2048], op[32];
        tok t[MAX_TOK];
        int lineno = 0;
        while (fgets(line, sizeof line, f)) {
            lineno++;
            int n = tokenize(line, op, sizeof op, t, MAX_TOK);
            if (n < 0)
                continue;
            uint64_t now = (uint64_t)atoll(get(t, n, "t") ? get(t, n, "t") : "0") * MS + 1;
            sqfw_request r;
            sqfw_decision d;
            if (!strcmp(op, "policy")) {
                size_t len = 0;
                uint8_t *b = load(t[0].key, &len);
                uint32_t off;
                if (!b || fx_install_blob(&fx, b, len, 1, &off) != SQFW_OK) {
                    fprintf(stderr, "%s:%d: cannot load policy %s\n", argv[a], lineno, t[0].key);
                    return 2;
                }
                free(b);
            } else if (!strcmp(op, "attest")) {
                uint8_t sha[32];
                if (!hexbytes(get(t, n, "sha") ? get(t, n, "sha") : "", sha, 32)) {
                    fprintf(stderr, "%s:%d: bad sha\n", argv[a], lineno);
                    return 2;
                }
                sqfw_attest(fx.e, strtoull(get(t, n, "key"), NULL, 0), sha, now);
            } else if (!strcmp(op, "bind")) {
                const char *s = get(t, n, "service");
                sqfw_service_bind(fx.e, strtoull(get(t, n, "key"), NULL, 0), (const uint8_t *)s,
                                  (uint32_t)strlen(s));
            } else if (!strcmp(op, "level")) {
                const char *lv = NULL;
                for (int i = 0; i < n; i++)
                    if (!t[i].val[0])
                        lv = t[i].key;
                if (!lv || sqfw_set_level(fx.e, (uint32_t)atoi(lv), now) != SQFW_OK) {
                    fprintf(stderr, "%s:%d: level switch refused\n", argv[a], lineno);
                    failed++;
                }
            } else if (!strcmp(op, "connect") || !strcmp(op, "explain")) {
                if (!build_request(t, n, &r)) {
                    fprintf(stderr, "%s:%d: bad request\n", argv[a], lineno);
                    return 2;
                }
                if (op[0] == 'c')
                    sqfw_authorize(fx.e, &r, now, &d);
                else
                    sqfw_explain(fx.e, &r, now, &d);
                flows++;
                failed += !check(argv[a], lineno, t, n, &d);
            } else if (!strcmp(op, "flow")) {
                if (!build_request(t, n, &r) ||
                    sqfw_flow_established(fx.e, strtoull(get(t, n, "id"), NULL, 0), &r, now) != SQFW_OK) {
                    fprintf(stderr, "%s:%d: flow not established\n", argv[a], lineno);
                    failed++;
                }
            } else if (!strcmp(op, "packet")) {
                sqfw_packet(fx.e, strtoull(get(t, n, "id"), NULL, 0), (uint32_t)atoi(get(t, n, "bytes")), now, &d);
                flows++;
                failed += !check(argv[a], lineno, t, n, &d);
            } else {
                fprintf(stderr, "%s:%d: unknown operation %s\n", argv[a], lineno, op);
                return 2;
            }
        }
        fclose(f);
        fx_close(&fx);
    }
    printf("replay: %d decisions, %d passed, %d failed\n", flows, flows - failed, failed);
    return failed || flows == 0 ? 1 : 0;
}
