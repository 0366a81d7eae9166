/* libFuzzer target for the policy blob parser and compiler.
 *
 * A random mutation almost never carries a valid CRC, so the harness
 * rewrites the checksum for odd-length inputs: the parser's deeper checks
 * (sections, records, references) then get fuzzed too, while even-length
 * inputs keep exercising the checksum path itself. Accepted blobs are
 * compiled, installed and classified against, so the lookup structures
 * built from hostile input are exercised as well. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/crc32.h"
#include "../core/le.h"
#include "../core/policy_format.h"
#include "../core/sqfw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sqfw_engine *engine;
static void *engine_mem;

static void ensure_engine(void)
{
    if (engine)
        return;
    sqfw_limits l = {.max_flows = 64, .max_syn_slots = SQFW_MAX_SYN_SLOTS, .max_attest = 16, .max_services = 16,
                     .max_events = 16, .seed = 1};
    size_t n = sqfw_engine_size(&l);
    engine_mem = aligned_alloc(64, (n + 63) & ~(size_t)63);
    sqfw_engine_init(engine_mem, n, &l, &engine);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ensure_engine();
    uint8_t *b = malloc(size ? size : 1);
    memcpy(b, data, size);
    if ((size & 1) && size >= SQFW_HDR_SIZE) {
        put32(b + SQFW_HDR_TOTAL, (uint32_t)size);
        put32(b + SQFW_HDR_CRC, 0);
        put32(b + SQFW_HDR_CRC, sqfw_crc32(0, b, size));
    }
    uint32_t off = 0;
    size_t need = 0;
    int rc = sqfw_policy_arena_size(b, size, &need, &off);
    if (rc == SQFW_OK) {
        if (off != 0)
            abort();
        void *arena = aligned_alloc(64, (need + 63) & ~(size_t)63);
        sqfw_policy *p = NULL;
        if (sqfw_policy_compile(b, size, arena, need, &p, &off) == SQFW_OK) {
            sqfw_policy *prev = NULL;
            if (sqfw_engine_install(engine, p, 1, &prev) == SQFW_OK) {
                /* classify a few requests derived from the input */
                sqfw_request r;
                memset(&r, 0, sizeof r);
                r.process_key = 1;
                r.path = data;
                r.path_len = (uint32_t)(size < 64 ? size : 64);
                r.service = data;
                r.service_len = (uint32_t)(size < 8 ? size : 8);
                for (int i = 0; i < 4; i++) {
                    r.direction = (uint8_t)(1 + (i & 1));
                    r.protocol = i & 2 ? 17 : 6;
                    r.family = i < 2 ? 4 : 6;
                    memcpy(r.remote_addr, data + (size > 16 ? size - 16 : 0), size > 16 ? 16 : size);
                    r.remote_port = (uint16_t)(size * 31u + (unsigned)i);
                    r.local_port = r.remote_port;
                    sqfw_decision d;
                    sqfw_authorize(engine, &r, 2 + (uint64_t)i, &d);
                    sqfw_explain(engine, &r, 2, &d);
                }
                sqfw_tick(engine, 1000000000ull);
                sqfw_set_level(engine, (uint32_t)(size % 3), 3);
                sqfw_event ev;
                while (sqfw_next_event(engine, &ev))
                    ;
                /* detach so the arena can go; the engine holds no other pointer into it */
                sqfw_engine_detach(engine);
            }
        }
        free(arena);
    } else if (off > size) {
        abort(); /* an error must point inside the blob */
    }
    free(b);
    return 0;
}
