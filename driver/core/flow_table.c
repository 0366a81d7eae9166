#include "flow_table.h"
#include "hashmix.h"

static uint32_t heads_for(uint32_t cap)
{
    uint32_t h = 16;
    while (h < cap)
        h <<= 1;
    return h;
}

size_t sq_flow_table_bytes(uint32_t cap)
{
    return sq_align8((size_t)cap * sizeof(sq_flow)) + sq_align8((size_t)heads_for(cap) * 4);
}

void sq_flow_table_init(sq_flow_table *t, void *mem, uint32_t cap)
{
    uint8_t *m = (uint8_t *)mem;
    uint32_t nh = heads_for(cap);
    t->pool = (sq_flow *)m;
    t->heads = (uint32_t *)(m + sq_align8((size_t)cap * sizeof(sq_flow)));
    t->cap = cap;
    t->mask = nh - 1;
    t->active = 0;
    sq_zero(t->pool, (size_t)cap * sizeof(sq_flow));
    sq_zero(t->heads, (size_t)nh * 4);
    for (uint32_t i = 0; i < cap; i++)
        t->pool[i].next = i + 2 <= cap ? i + 2 : 0;
    t->free_head = cap ? 1 : 0;
}

static uint32_t bucket(const sq_flow_table *t, uint64_t id) { return (uint32_t)(sq_mix64(id) & t->mask); }

sq_flow *sq_flow_find(sq_flow_table *t, uint64_t flow_id)
{
    for (uint32_t i = t->heads[bucket(t, flow_id)]; i; i = t->pool[i - 1].next)
        if (t->pool[i - 1].flow_id == flow_id)
            return &t->pool[i - 1];
    return NULL;
}

sq_flow *sq_flow_alloc(sq_flow_table *t, uint64_t flow_id)
{
    if (!t->free_head || sq_flow_find(t, flow_id))
        return NULL;
    uint32_t i = t->free_head;
    sq_flow *f = &t->pool[i - 1];
    t->free_head = f->next;
    sq_zero(f, sizeof *f);
    f->flow_id = flow_id;
    f->in_use = 1;
    uint32_t b = bucket(t, flow_id);
    f->next = t->heads[b];
    t->heads[b] = i;
    t->active++;
    return f;
}

void sq_flow_free(sq_flow_table *t, sq_flow *f)
{
    uint32_t idx = (uint32_t)(f - t->pool) + 1;
    uint32_t *link = &t->heads[bucket(t, f->flow_id)];
    while (*link && *link != idx)
        link = &t->pool[*link - 1].next;
    if (*link)
        *link = f->next;
    f->in_use = 0;
    f->flow_id = 0;
    f->next = t->free_head;
    t->free_head = idx;
    t->active--;
}
