#include "trace_meta.h"
#include "le.h"

const sq_tlg_event_def sq_tlg_events[SQ_TLG_EVENTS] = {
    {SQFW_EV_ALLOWED, "ConnectionAllowed", "Level", SQ_TLG_LEVEL_VERBOSE, SQ_TLG_KW_ALLOWED},
    {SQFW_EV_BLOCKED, "ConnectionBlocked", "Level", SQ_TLG_LEVEL_WARNING, SQ_TLG_KW_BLOCKED},
    {SQFW_EV_AUDIT, "ConnectionAudited", "Level", SQ_TLG_LEVEL_INFO, SQ_TLG_KW_AUDIT},
    {SQFW_EV_RATE, "ConnectionRateDropped", "Level", SQ_TLG_LEVEL_WARNING, SQ_TLG_KW_RATE},
    /* the pend outcome: the connect waits for the agent's attestation (or,
     * with reason PEND_FULL, got the policy's answer at once) */
    {SQFW_EV_NEW_IDENTITY, "ConnectionPended", "PendSlot", SQ_TLG_LEVEL_INFO, SQ_TLG_KW_PEND},
};

const sq_tlg_event_def *sq_tlg_event_for(uint32_t type)
{
    for (uint32_t i = 0; i < SQ_TLG_EVENTS; i++)
        if (sq_tlg_events[i].type == type)
            return &sq_tlg_events[i];
    return NULL;
}

/* The fields every connection event carries, in payload order. A NULL name
 * is the event's value field (its name differs per event). */
typedef struct field {
    const char *name;
    uint8_t in, out; /* out 0: no OutType byte */
} field;

static const field fields[] = {
    {"Direction", SQ_TLG_IN_UINT8, 0},      /* SQFW_DIR_OUTBOUND 1, INBOUND 2 */
    {"Protocol", SQ_TLG_IN_UINT8, 0},       /* IP protocol number */
    {"LocalAddress", SQ_TLG_IN_BINARY, SQ_TLG_OUT_SOCKETADDRESS},
    {"LocalPort", SQ_TLG_IN_UINT16, 0},
    {"RemoteAddress", SQ_TLG_IN_BINARY, SQ_TLG_OUT_SOCKETADDRESS},
    {"RemotePort", SQ_TLG_IN_UINT16, 0},
    {"ProcessId", SQ_TLG_IN_UINT32, SQ_TLG_OUT_PID},
    {"ProcessKey", SQ_TLG_IN_UINT64, SQ_TLG_OUT_HEX},
    {"User", SQ_TLG_IN_COUNTEDANSISTRING, SQ_TLG_OUT_UTF8},
    {"Application", SQ_TLG_IN_COUNTEDANSISTRING, SQ_TLG_OUT_UTF8},
    {"ApplicationTruncated", SQ_TLG_IN_UINT8, SQ_TLG_OUT_BOOLEAN},
    {"Reason", SQ_TLG_IN_UINT32, 0},
    {"RuleId", SQ_TLG_IN_UINT32, 0},
    {"ClassId", SQ_TLG_IN_UINT32, 0},
    {"IdentityId", SQ_TLG_IN_UINT32, 0},
    {NULL, SQ_TLG_IN_UINT32, 0},
};

static size_t slen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* Appends a NUL-terminated name; returns the new position, 0 when full. */
static size_t put_name(uint8_t *out, size_t pos, size_t cap, const char *s)
{
    size_t n = slen(s) + 1;
    if (pos == 0 || n > cap - pos)
        return 0;
    sq_copy(out + pos, s, n);
    return pos + n;
}

/* The size prefix covers the whole blob and is a UINT16. */
static size_t finish(uint8_t *out, size_t len)
{
    if (len == 0 || len > 0xFFFFu)
        return 0;
    put16(out, (uint16_t)len);
    return len;
}

size_t sq_tlg_provider_meta(uint8_t *out, size_t cap)
{
    if (cap < 2)
        return 0;
    return finish(out, put_name(out, 2, cap, SQ_TLG_PROVIDER_NAME));
}

size_t sq_tlg_event_meta(const sq_tlg_event_def *def, uint8_t *out, size_t cap)
{
    if (!def || cap < 3)
        return 0;
    out[2] = 0; /* event tags: none, one byte without the chain bit */
    size_t pos = put_name(out, 3, cap, def->name);
    for (size_t i = 0; pos && i < sizeof fields / sizeof fields[0]; i++) {
        pos = put_name(out, pos, cap, fields[i].name ? fields[i].name : def->value);
        size_t need = fields[i].out ? 2u : 1u;
        if (!pos || need > cap - pos)
            return 0;
        out[pos++] = (uint8_t)(fields[i].in | (fields[i].out ? SQ_TLG_CHAIN : 0u));
        if (fields[i].out)
            out[pos++] = fields[i].out;
    }
    return finish(out, pos);
}

/* SOCKADDR_IN (16 bytes) or SOCKADDR_IN6 (28): family little-endian (AF_INET
 * 2, Windows' AF_INET6 23), port in network order, address as on the wire. */
static size_t sockaddr(uint8_t *p, uint8_t family, const uint8_t addr[16], uint16_t port)
{
    size_t n = family == 6 ? 28u : 16u;
    sq_zero(p, n);
    put16(p, family == 6 ? 23u : 2u);
    p[2] = (uint8_t)(port >> 8);
    p[3] = (uint8_t)port;
    if (family == 6)
        sq_copy(p + 8, addr, 16);
    else
        sq_copy(p + 4, addr, 4);
    return n;
}

size_t sq_tlg_payload(const sqfw_event *ev, uint8_t *out, size_t cap)
{
    uint32_t path = ev->path_len > SQFW_EVENT_PATH_MAX ? SQFW_EVENT_PATH_MAX : ev->path_len;
    uint32_t user = ev->user_len > SQFW_EVENT_USER_MAX ? SQFW_EVENT_USER_MAX : ev->user_len;
    /* fixed part, IPv6 sized: 1+1 + 2+28 + 2 + 2+28 + 2 + 4+8 + 2 + 2 + 1 + 5*4 */
    size_t need = 103u + user + path;
    if (need > cap)
        return 0;
    uint8_t *p = out;
    *p++ = ev->direction;
    *p++ = ev->protocol;
    size_t n = sockaddr(p + 2, ev->family, ev->local_addr, ev->local_port);
    put16(p, (uint16_t)n);
    p += 2 + n;
    put16(p, ev->local_port);
    p += 2;
    n = sockaddr(p + 2, ev->family, ev->remote_addr, ev->remote_port);
    put16(p, (uint16_t)n);
    p += 2 + n;
    put16(p, ev->remote_port);
    p += 2;
    put32(p, ev->pid);
    put64(p + 4, ev->process_key);
    p += 12;
    put16(p, (uint16_t)user);
    sq_copy(p + 2, ev->user, user);
    p += 2 + user;
    put16(p, (uint16_t)path);
    sq_copy(p + 2, ev->path, path);
    p += 2 + path;
    *p++ = ev->path_truncated ? 1u : 0u;
    put32(p, ev->reason);
    put32(p + 4, ev->rule_id);
    put32(p + 8, ev->class_id);
    put32(p + 12, ev->identity_id);
    put32(p + 16, ev->value);
    p += 20;
    return (size_t)(p - out);
}

int sq_tlg_enabled(uint8_t level, uint64_t keyword, uint8_t on_level, uint64_t any, uint64_t all)
{
    if (on_level != 0 && level > on_level)
        return 0;
    if (keyword == 0)
        return 1;
    return (keyword & any) != 0 && (keyword & all) == all;
}
