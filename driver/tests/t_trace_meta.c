/* The TraceLogging encoding of the driver's ETW events, against byte
 * vectors worked out by hand from the documented format, and the engine's
 * event tap that feeds it. */
#include "../core/le.h"
#include "../core/trace_meta.h"
#include "fixture.h"
#include "test.h"

/* Provider metadata: UINT16 total size, the UTF-8 name, NUL (no traits). */
static const char golden_provider[] = "\x12\x00"          /* 18 = 2 + 15 + 1 */
                                      "SieveQ-Firewall\0"; /* name, NUL */

/* ConnectionBlocked's event metadata. Per field: name, NUL, InType byte
 * (0x80 set when an OutType byte follows), [OutType]. */
static const char golden_blocked[] =
    "\xD1\x00"                   /* UINT16 total size: 209 */
    "\x00"                       /* tags: none, no chain bit */
    "ConnectionBlocked\0"        /* event name, NUL */
    "Direction\0" "\x04"         /* TlgInUINT8 */
    "Protocol\0" "\x04"          /* TlgInUINT8 */
    "LocalAddress\0" "\x8E\x0A"  /* TlgInBINARY|chain, TlgOutSOCKETADDRESS */
    "LocalPort\0" "\x06"         /* TlgInUINT16 */
    "RemoteAddress\0" "\x8E\x0A" /* TlgInBINARY|chain, TlgOutSOCKETADDRESS */
    "RemotePort\0" "\x06"        /* TlgInUINT16 */
    "ProcessId\0" "\x88\x05"     /* TlgInUINT32|chain, TlgOutPID */
    "ProcessKey\0" "\x8A\x04"    /* TlgInUINT64|chain, TlgOutHEX */
    "User\0" "\x97\x23"          /* TlgInCOUNTEDANSISTRING (23)|chain, TlgOutUTF8 (35) */
    "Application\0" "\x97\x23"   /* same */
    "ApplicationTruncated\0" "\x84\x03" /* TlgInUINT8|chain, TlgOutBOOLEAN */
    "Reason\0" "\x08"            /* TlgInUINT32 */
    "RuleId\0" "\x08"
    "ClassId\0" "\x08"
    "IdentityId\0" "\x08"
    "Level\0" "\x08";

TEST(trace_provider_metadata_matches_the_hand_vector)
{
    uint8_t buf[64];
    size_t n = sq_tlg_provider_meta(buf, sizeof buf);
    CHECK_EQ(n, sizeof golden_provider - 1);
    CHECK(memcmp(buf, golden_provider, sizeof golden_provider - 1) == 0);
    CHECK_EQ(sq_tlg_provider_meta(buf, 17), 0); /* one byte short: refused, not truncated */
}

TEST(trace_event_metadata_matches_the_hand_vector)
{
    uint8_t buf[SQ_TLG_META_MAX];
    const sq_tlg_event_def *def = sq_tlg_event_for(SQFW_EV_BLOCKED);
    CHECK(def != NULL);
    size_t n = sq_tlg_event_meta(def, buf, sizeof buf);
    CHECK_EQ(n, sizeof golden_blocked - 1);
    CHECK(memcmp(buf, golden_blocked, sizeof golden_blocked - 1) == 0);
    CHECK_EQ(def->level, SQ_TLG_LEVEL_WARNING);
    CHECK_EQ(def->keyword, SQ_TLG_KW_BLOCKED);
    for (size_t cap = 0; cap < n; cap++) /* every short buffer refused */
        CHECK_EQ(sq_tlg_event_meta(def, buf, cap), 0);
    /* every logged event fits its fixed buffer; LEVEL and POLICY are not logged */
    for (uint32_t i = 0; i < SQ_TLG_EVENTS; i++)
        CHECK(sq_tlg_event_meta(&sq_tlg_events[i], buf, sizeof buf) > 0);
    CHECK(sq_tlg_event_for(SQFW_EV_LEVEL) == NULL && sq_tlg_event_for(SQFW_EV_POLICY) == NULL);
    n = sq_tlg_event_meta(sq_tlg_event_for(SQFW_EV_NEW_IDENTITY), buf, sizeof buf);
    CHECK(n > 9 && memcmp(buf + n - 10, "PendSlot\0\x08", 10) == 0);
}

TEST(trace_payload_layout)
{
    sqfw_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = SQFW_EV_BLOCKED, ev.direction = 1, ev.protocol = 6, ev.family = 4;
    ev.local_addr[0] = 10, ev.local_addr[3] = 5, ev.local_port = 50000;
    ev.remote_addr[0] = 10, ev.remote_addr[1] = 20, ev.remote_addr[2] = 1, ev.remote_addr[3] = 1;
    ev.remote_port = 443, ev.pid = 4000, ev.process_key = 0x1122334455667788ull;
    memcpy(ev.user, "S-1-5-18", 8), ev.user_len = 8;
    memcpy(ev.path, "\\x.exe", 6), ev.path_len = 6;
    ev.reason = 3, ev.rule_id = 7, ev.class_id = 2, ev.identity_id = 9, ev.value = 1;
    uint8_t p[SQ_TLG_PAYLOAD_MAX];
    size_t n = sq_tlg_payload(&ev, p, sizeof p);
    /* 1+1 + 2+16 + 2 + 2+16 + 2 + 4 + 8 + 2+8 + 2+6 + 1 + 20 */
    CHECK_EQ(n, 93);
    CHECK(p[0] == 1 && p[1] == 6);
    static const uint8_t local_sa[16] = {2, 0, 0xC3, 0x50, 10, 0, 0, 5}; /* AF_INET, port 50000 big-endian */
    CHECK(le16(p + 2) == 16 && memcmp(p + 4, local_sa, 16) == 0);
    CHECK_EQ(le16(p + 20), 50000);
    static const uint8_t remote_sa[16] = {2, 0, 0x01, 0xBB, 10, 20, 1, 1};
    CHECK(le16(p + 22) == 16 && memcmp(p + 24, remote_sa, 16) == 0);
    CHECK_EQ(le16(p + 40), 443);
    CHECK_EQ(le32(p + 42), 4000);
    CHECK(le64(p + 46) == 0x1122334455667788ull);
    CHECK(le16(p + 54) == 8 && memcmp(p + 56, "S-1-5-18", 8) == 0);
    CHECK(le16(p + 64) == 6 && memcmp(p + 66, "\\x.exe", 6) == 0);
    CHECK_EQ(p[72], 0);
    CHECK(le32(p + 73) == 3 && le32(p + 77) == 7 && le32(p + 81) == 2 && le32(p + 85) == 9 && le32(p + 89) == 1);
    CHECK_EQ(sq_tlg_payload(&ev, p, n - 1), 0);

    /* IPv6: SOCKADDR_IN6, 28 bytes, family 23 */
    ev.family = 6;
    ev.remote_addr[15] = 0x42;
    n = sq_tlg_payload(&ev, p, sizeof p);
    CHECK_EQ(n, 93 + 24);
    CHECK(le16(p + 2) == 28 && le16(p + 4) == 23 && le16(p + 34) == 28 && le16(p + 36) == 23 && p[36 + 8 + 15] == 0x42);
    /* the largest event fits the documented bound */
    ev.user_len = SQFW_EVENT_USER_MAX, ev.path_len = SQFW_EVENT_PATH_MAX;
    CHECK_EQ(sq_tlg_payload(&ev, p, sizeof p), 103 + SQFW_EVENT_USER_MAX + SQFW_EVENT_PATH_MAX);
}

TEST(trace_enablement_rule)
{
    CHECK(sq_tlg_enabled(3, SQ_TLG_KW_BLOCKED, 4, SQ_TLG_KW_BLOCKED, 0));
    CHECK(!sq_tlg_enabled(5, SQ_TLG_KW_ALLOWED, 4, ~0ull, 0));       /* verbose event, info session */
    CHECK(sq_tlg_enabled(5, SQ_TLG_KW_ALLOWED, 0, ~0ull, 0));        /* level 0: any */
    CHECK(!sq_tlg_enabled(3, SQ_TLG_KW_RATE, 5, SQ_TLG_KW_BLOCKED, 0)); /* keyword not asked for */
    CHECK(!sq_tlg_enabled(3, SQ_TLG_KW_BLOCKED, 5, SQ_TLG_KW_BLOCKED, SQ_TLG_KW_BLOCKED | SQ_TLG_KW_RATE));
    CHECK(sq_tlg_enabled(3, 0, 5, 0, 0));
}

/* The GUID text the C# check reads and the binary constants the driver registers are one value. */
TEST(trace_provider_guid_text_and_fields_agree)
{
    static const uint8_t d4[8] = SQ_TLG_GUID_DATA4;
    char txt[40];
    snprintf(txt, sizeof txt, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", SQ_TLG_GUID_DATA1,
             SQ_TLG_GUID_DATA2, SQ_TLG_GUID_DATA3, d4[0], d4[1], d4[2], d4[3], d4[4], d4[5], d4[6], d4[7]);
    CHECK(strcmp(txt, SQ_TLG_PROVIDER_GUID_TEXT) == 0);
    CHECK_EQ(SQ_TLG_GUID_DATA3 >> 12, 5); /* name-based (v5) */
}

static int taps;
static sqfw_event tapped;
static void tap(void *ctx, const sqfw_event *ev)
{
    taps += ctx == &taps;
    tapped = *ev;
}

TEST(trace_tap_hears_every_event_even_when_the_ring_is_full)
{
    fx_engine f;
    sqfw_limits l = fx_limits();
    l.max_events = 2;
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    sqfw_request r = fx_req("\\app.exe", SQFW_DIR_OUTBOUND, 6, "1.2.3.4", 443);
    sqfw_decision d;
    taps = 0;
    sqfw_authorize(f.e, &r, 1, &d); /* no tap: nothing heard */
    CHECK_EQ(taps, 0);
    sqfw_set_event_tap(f.e, tap, &taps);
    for (int i = 0; i < 3; i++) /* the third finds the ring full */
        sqfw_authorize(f.e, &r, 1, &d);
    CHECK_EQ(taps, 3);
    CHECK(tapped.type == SQFW_EV_AUDIT && tapped.pid == 4242 && tapped.remote_port == 443 &&
          tapped.path_len == 8 && memcmp(tapped.path, "\\app.exe", 8) == 0);
    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.events_dropped, 2);
    sqfw_set_event_tap(f.e, NULL, NULL);
    sqfw_authorize(f.e, &r, 1, &d);
    CHECK_EQ(taps, 3);
    fx_close(&f);
}
