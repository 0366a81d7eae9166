/* Bounded event queue towards the agent. When the agent is slow, new events
 * are dropped and counted rather than blocking the packet path. */
#ifndef SQFW_EVENT_RING_H
#define SQFW_EVENT_RING_H

#include "sqfw.h"

typedef struct sq_event_ring {
    sqfw_event *ev;
    uint32_t cap, head, count;
} sq_event_ring;

size_t sq_event_ring_bytes(uint32_t cap);
void sq_event_ring_init(sq_event_ring *r, void *mem, uint32_t cap);
sqfw_event *sq_event_ring_push(sq_event_ring *r); /* NULL when full */
int sq_event_ring_pop(sq_event_ring *r, sqfw_event *out);

#endif
