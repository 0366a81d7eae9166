#include "event_ring.h"

size_t sq_event_ring_bytes(uint32_t cap) { return sq_align8((size_t)cap * sizeof(sqfw_event)); }

void sq_event_ring_init(sq_event_ring *r, void *mem, uint32_t cap)
{
    r->ev = (sqfw_event *)mem;
    r->cap = cap;
    r->head = r->count = 0;
}

sqfw_event *sq_event_ring_push(sq_event_ring *r)
{
    if (r->count >= r->cap)
        return NULL;
    sqfw_event *e = &r->ev[(r->head + r->count) % r->cap];
    r->count++;
    sq_zero(e, sizeof *e);
    return e;
}

int sq_event_ring_pop(sq_event_ring *r, sqfw_event *out)
{
    if (r->count == 0)
        return 0;
    sq_copy(out, &r->ev[r->head], sizeof *out);
    r->head = (r->head + 1) % r->cap;
    r->count--;
    return 1;
}
