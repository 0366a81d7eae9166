/* The driver's ETW provider in the TraceLogging self-describing format,
 * encoded here because mingw-w64 has no TraceLoggingProvider.h and the
 * encoding is pure byte work that can be unit-tested on Linux. The glue
 * (wfp/etw.c) only registers the provider and hands these bytes to
 * EtwWriteTransfer.
 *
 * Metadata blobs are built once (at load) into fixed buffers; an event's
 * payload is serialised into a caller's stack buffer. Nothing allocates. */
#ifndef SQFW_TRACE_META_H
#define SQFW_TRACE_META_H

#include "sqfw.h"

/* The provider's name and its TraceLogging name-hash GUID (what .NET's
 * EventSource.GetGuid("SieveQ-Firewall") gives, so `wpr`/`tracelog` users
 * can name either). tests/SieveQ.Firewall.Tests checks the GUID against
 * EventSource; the text form below is what it reads. */
#define SQ_TLG_PROVIDER_NAME "SieveQ-Firewall"
#define SQ_TLG_PROVIDER_GUID_TEXT "735256d3-9cfd-51cc-80a3-20f5e57a8247"
#define SQ_TLG_GUID_DATA1 0x735256d3u
#define SQ_TLG_GUID_DATA2 0x9cfdu
#define SQ_TLG_GUID_DATA3 0x51ccu
#define SQ_TLG_GUID_DATA4 {0x80, 0xa3, 0x20, 0xf5, 0xe5, 0x7a, 0x82, 0x47}

/* Channel 11 is what marks an event as TraceLogging to ETW decoders. */
#define SQ_TLG_CHANNEL 11u

/* Keywords: an operator enables only the kinds wanted (e.g. 0x2 for blocks). */
#define SQ_TLG_KW_ALLOWED 0x1ull
#define SQ_TLG_KW_BLOCKED 0x2ull
#define SQ_TLG_KW_AUDIT 0x4ull
#define SQ_TLG_KW_RATE 0x8ull
#define SQ_TLG_KW_PEND 0x10ull

/* ETW levels (winmeta.xml) */
#define SQ_TLG_LEVEL_WARNING 3u
#define SQ_TLG_LEVEL_INFO 4u
#define SQ_TLG_LEVEL_VERBOSE 5u

/* TraceLogging InType/OutType values (TraceLoggingProvider.h's TlgIn/TlgOut) */
#define SQ_TLG_IN_UINT8 4u
#define SQ_TLG_IN_UINT16 6u
#define SQ_TLG_IN_UINT32 8u
#define SQ_TLG_IN_UINT64 10u
#define SQ_TLG_IN_BINARY 14u            /* UINT16 byte count, then the bytes */
#define SQ_TLG_IN_COUNTEDANSISTRING 23u /* UINT16 byte count, then the bytes */
#define SQ_TLG_CHAIN 0x80u              /* on an InType: an OutType byte follows */
#define SQ_TLG_OUT_BOOLEAN 3u
#define SQ_TLG_OUT_HEX 4u
#define SQ_TLG_OUT_PID 5u
#define SQ_TLG_OUT_SOCKETADDRESS 10u
#define SQ_TLG_OUT_UTF8 35u

#define SQ_TLG_META_MAX 512u    /* one event's metadata; the largest is ~300 bytes */
#define SQ_TLG_PAYLOAD_MAX 600u /* one event's payload; at most 103 + 184 + 256 bytes */

/* The connection events; SQFW_EV_LEVEL and SQFW_EV_POLICY have no ETW event. */
typedef struct sq_tlg_event_def {
    uint32_t type;       /* SQFW_EV_* */
    const char *name;    /* TraceLogging event name */
    const char *value;   /* name of the field carrying sqfw_event.value */
    uint8_t level;
    uint64_t keyword;
} sq_tlg_event_def;

#define SQ_TLG_EVENTS 5u
extern const sq_tlg_event_def sq_tlg_events[SQ_TLG_EVENTS];
/* NULL for an event type that is not logged through ETW */
const sq_tlg_event_def *sq_tlg_event_for(uint32_t type);

/* Provider metadata (also the EtwSetInformation(EventProviderSetTraits)
 * blob): UINT16 size, the UTF-8 name, NUL. Returns its length, 0 when cap
 * is too small. */
size_t sq_tlg_provider_meta(uint8_t *out, size_t cap);
/* One event's metadata. Returns its length, 0 when cap is too small. */
size_t sq_tlg_event_meta(const sq_tlg_event_def *def, uint8_t *out, size_t cap);
/* The event's field values in metadata order. Returns the length, 0 when
 * cap is too small. */
size_t sq_tlg_payload(const sqfw_event *ev, uint8_t *out, size_t cap);

/* TraceLogging's enablement rule: level 0 means any level; a keyword of 0
 * is always on; otherwise some bit of `any` and every bit of `all` must
 * be set in the event's keyword. */
int sq_tlg_enabled(uint8_t level, uint64_t keyword, uint8_t on_level, uint64_t any, uint64_t all);

#endif
