/* Shared helpers for tests: engines, requests and policies. */
#ifndef SQFW_FIXTURE_H
#define SQFW_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "../core/sqfw.h"
#include "blob_builder.h"

typedef struct fx_engine {
    sqfw_engine *e;
    void *mem;
    void *pol_mem[8];
    int n_pol;
} fx_engine;

static inline sqfw_limits fx_limits(void)
{
    sqfw_limits l = {.max_flows = 1024, .max_syn_slots = 4096, .max_attest = 256, .max_services = 64,
                     .max_events = 64, .seed = 0x5eed5eed12345678ull};
    return l;
}

static inline int fx_open(fx_engine *f, const sqfw_limits *l)
{
    memset(f, 0, sizeof *f);
    size_t n = sqfw_engine_size(l);
    f->mem = aligned_alloc(64, (n + 63) & ~(size_t)63);
    return sqfw_engine_init(f->mem, n, l, &f->e);
}

/* Compiles and installs; returns the status (policy memory kept until close). */
static inline int fx_install_blob(fx_engine *f, const uint8_t *blob, size_t len, uint64_t now, uint32_t *err)
{
    size_t need = 0;
    int rc = sqfw_policy_arena_size(blob, len, &need, err);
    if (rc)
        return rc;
    void *mem = aligned_alloc(64, (need + 63) & ~(size_t)63);
    sqfw_policy *p = NULL;
    rc = sqfw_policy_compile(blob, len, mem, need, &p, err);
    if (rc) {
        free(mem);
        return rc;
    }
    rc = sqfw_engine_install(f->e, p, now, NULL);
    if (rc || f->n_pol >= 8) {
        free(mem);
        return rc ? rc : SQFW_E_FULL;
    }
    f->pol_mem[f->n_pol++] = mem;
    return SQFW_OK;
}

static inline int fx_install(fx_engine *f, const qb_policy *p, uint64_t now)
{
    size_t len;
    uint8_t *b = qb_build_alloc(p, &len);
    uint32_t err;
    int rc = fx_install_blob(f, b, len, now, &err);
    free(b);
    return rc;
}

static inline void fx_close(fx_engine *f)
{
    for (int i = 0; i < f->n_pol; i++)
        free(f->pol_mem[i]);
    free(f->mem);
    memset(f, 0, sizeof *f);
}

static inline sqfw_request fx_req(const char *path, uint8_t dir, uint8_t proto, const char *remote, uint16_t port)
{
    sqfw_request r;
    memset(&r, 0, sizeof r);
    r.process_key = 1000;
    r.pid = 4242;
    r.path = (const uint8_t *)path;
    r.path_len = path ? (uint32_t)strlen(path) : 0;
    r.direction = dir;
    r.protocol = proto;
    qb_parse_addr(remote, &r.family, r.remote_addr);
    if (dir == SQFW_DIR_INBOUND)
        r.local_port = port;
    else
        r.remote_port = port;
    return r;
}

static inline void fx_service(sqfw_request *r, const char *svc)
{
    r->service = (const uint8_t *)svc;
    r->service_len = (uint32_t)strlen(svc);
}

static inline void fx_user(sqfw_request *r, const char *sid)
{
    r->user = (const uint8_t *)sid;
    r->user_len = (uint32_t)strlen(sid);
}

#define MS 1000000ull
#define SEC 1000000000ull

#endif
