using SieveQ.Rules.Document;
using SieveQ.Rules.Evaluation;

namespace SieveQ.Rules.Tests;

/// <summary>Every kind of rule with a sample it accepts and one it refuses, and the rule named in each verdict.</summary>
public sealed class RuleKindTests
{
    private static readonly long Tuesday10 = T.At("2026-11-24T10:00:00Z");

    private static RuleEvaluator Evaluator(string members) => T.Compile(T.Doc(members)).CreateEvaluator();

    [Fact]
    public void Routes_allow_listed_pairs_and_topics_and_deny_the_rest_by_default()
    {
        var e = Evaluator("""
            "senders": [{ "id": 1 }, { "id": 2 }, { "id": 3 }],
            "senderGroups": [{ "name": "ops", "senders": [2, 3] }],
            "receivers": [{ "id": 100 }, { "id": 200 }, { "id": 201 }],
            "topics": [{ "name": "alerts", "receivers": [200, 201] }],
            "rules": [
              { "name": "one-to-100", "action": "allow", "from": { "senders": [1] }, "to": { "receivers": [100] } },
              { "name": "ops-alerts", "action": "allow", "from": { "groups": ["ops"] }, "to": { "topics": ["alerts"] } }
            ]
            """);
        T.Allowed(e.Decide(Tuesday10, 1, 100, "x"), "one-to-100");
        T.Allowed(e.Decide(Tuesday10, 3, 201, "x"), "ops-alerts");
        T.Denied(e.Decide(Tuesday10, 2, 100, "x"), RuleDecision.DefaultDeny, "sender 2 to reach receiver 100");
        T.Denied(e.Decide(Tuesday10, 1, 200, "x"), RuleDecision.DefaultDeny);
        T.Denied(e.Decide(Tuesday10, 9, 999, "x"), RuleDecision.DefaultDeny);
    }

    [Fact]
    public void An_empty_rule_set_denies_everything()
    {
        T.Denied(Evaluator("\"rules\": []").Decide(0, 1, 1, "x"), RuleDecision.DefaultDeny);
    }

    [Fact]
    public void The_first_matching_rule_decides_and_deny_rules_name_themselves()
    {
        var e = Evaluator("""
            "senders": [{ "id": 1 }, { "id": 2 }],
            "rules": [
              { "name": "block-2", "action": "deny", "from": { "senders": [2] }, "to": "any" },
              { "name": "everyone", "action": "allow", "from": "any", "to": "any" }
            ]
            """);
        T.Allowed(e.Decide(0, 1, 5, "x"), "everyone");
        T.Denied(e.Decide(0, 2, 5, "x"), "block-2");
        Assert.Equal("block-2: denied by rule", e.Decide(0, 2, 5, "x").ToVerdict().Reason);
        Assert.Equal("everyone", e.Decide(0, 1, 5, "x").ToVerdict().Reason);
    }

    [Fact]
    public void Size_limits_per_rule_and_per_rule_set()
    {
        var e = Evaluator("""
            "limits": { "maxMessageBytes": 100 },
            "rules": [{ "name": "small", "action": "allow", "from": "any", "to": "any", "maxBytes": 10 }]
            """);
        T.Allowed(e.Decide(0, 1, 1, new byte[10]), "small");
        T.Denied(e.Decide(0, 1, 1, new byte[11]), "small", "11 bytes, at most 10");
        T.Denied(e.Decide(0, 1, 1, new byte[101]), RuleDecision.SizeLimitRule);
    }

    private const string JsonFormat = """
        "formats": [{
          "name": "cmd", "kind": "json", "maxBytes": 200, "maxDepth": 3, "otherFields": "deny",
          "fields": [
            { "name": "op", "path": "/op", "type": "string", "enum": ["get", "set"] },
            { "name": "id", "path": "/target/id", "type": "integer", "ranges": [[1, 10], [20, 29]], "values": [99] },
            { "name": "level", "path": "/level", "type": "number", "min": -1.5, "max": 1.5, "required": false },
            { "name": "who", "path": "/who", "type": "string", "minLength": 2, "maxLength": 5, "regex": "^[a-z]+$" },
            { "name": "target", "path": "/target", "type": "object" },
            { "name": "flag", "path": "/flag", "type": "boolean", "required": false },
            { "name": "tags", "path": "/tags", "type": "array", "required": false }
          ]
        }],
        "rules": [{ "name": "commands", "action": "allow", "from": "any", "to": "any", "format": "cmd" }]
        """;

    [Theory]
    [InlineData("""{"op":"get","target":{"id":5},"who":"ann"}""")]
    [InlineData("""{"who":"bo","target":{"id":99},"op":"set","level":-1.5,"flag":true,"tags":[1,{"a":2}]}""")]
    [InlineData("""{"op":"s\u0065t","target":{"id":25},"who":"ann"}""")]
    [InlineData(" {\"op\":\"get\",\"target\":{\"id\":1},\"who\":\"ann\"}\n")]
    public void Json_format_accepts(string payload)
    {
        T.Allowed(Evaluator(JsonFormat).Decide(0, 1, 1, payload), "commands");
    }

    [Theory]
    [InlineData("""{"op":"del","target":{"id":5},"who":"ann"}""", "enumeration")]
    [InlineData("""{"op":"get","target":{"id":15},"who":"ann"}""", "id = 15 not allowed")]
    [InlineData("""{"op":"get","target":{"id":5.5},"who":"ann"}""", "must be an integer")]
    [InlineData("""{"op":"get","target":{"id":"5"},"who":"ann"}""", "must be an integer")]
    [InlineData("""{"op":"get","target":{"id":5},"who":"ann","level":2}""", "outside")]
    [InlineData("""{"op":"get","target":{"id":5},"who":"a"}""", "1 bytes long")]
    [InlineData("""{"op":"get","target":{"id":5},"who":"Ann"}""", "pattern")]
    [InlineData("""{"op":"get","target":{"id":5}}""", "required field who")]
    [InlineData("""{"op":"get","target":{"id":5},"who":"ann","op":"set"}""", "appears twice")]
    [InlineData("""{"op":"get","target":{"id":5},"target":{"id":6},"who":"ann"}""", "appears twice")]
    [InlineData("""{"op":"get","target":{"id":5},"who":"ann","x":1}""", "\"x\" at the root is not declared")]
    [InlineData("""{"op":"get","target":{"id":5,"y":2},"who":"ann"}""", "\"y\" at /target is not declared")]
    [InlineData("""{"op":"get","target":{"id":5},"who":"ann","tags":[[[1]]]}""", "not valid JSON")]
    [InlineData("""{"op":"get","target":{"id":5},"who":"ann"} {}""", "not valid JSON")]
    [InlineData("""{"op":"get","target":{"id":5},"who":"ann",}""", "not valid JSON")]
    [InlineData("""[1]""", "not a JSON object")]
    [InlineData("""{"op":"get","target":7,"who":"ann"}""", "must be an object")]
    public void Json_format_refuses(string payload, string why)
    {
        T.Denied(Evaluator(JsonFormat).Decide(0, 1, 1, payload), "commands", why);
    }

    [Fact]
    public void Json_format_refuses_payloads_above_its_size()
    {
        T.Denied(Evaluator(JsonFormat).Decide(0, 1, 1, "{\"op\":\"get\",\"target\":{\"id\":1},\"who\":\"ann\",\"pad\":\"" + new string('x', 200) + "\"}"), "commands", "at most 200");
    }

    private const string Modbus = """
        "formats": [{
          "name": "modbus", "kind": "binary", "minBytes": 12, "maxBytes": 260, "messageType": "fc",
          "fields": [
            { "name": "proto", "offset": 2, "length": 2, "values": [0] },
            { "name": "len", "offset": 4, "length": 2, "lengthFrom": 6 },
            { "name": "fc", "offset": 7, "length": 1, "values": [3, 6] },
            { "name": "readAt", "offset": 8, "length": 2, "when": { "field": "fc", "values": [3] }, "ranges": [[0, 99]] },
            { "name": "count", "offset": 10, "length": 2, "when": { "field": "fc", "values": [3] }, "min": 1, "max": 125 },
            { "name": "writeAt", "offset": 8, "length": 2, "when": { "field": "fc", "values": [6] }, "ranges": [[400, 409]] },
            { "name": "le", "offset": 8, "length": 4, "endian": "little", "when": { "field": "fc", "values": [99] } }
          ]
        }],
        "rules": [{ "name": "modbus", "action": "allow", "from": "any", "to": "any", "format": "modbus" }]
        """;

    [Theory]
    [InlineData("0001 0000 0006 01 03 0000 000a")]
    [InlineData("0001 0000 0006 01 03 0063 007d")]
    [InlineData("0001 0000 0006 01 06 0190 ffff")]
    [InlineData("0001 0000 0006 01 06 0199 0000")]
    public void Modbus_format_accepts(string hex) => T.Allowed(Evaluator(Modbus).Decide(0, 1, 1, T.Hex(hex)), "modbus");

    [Theory]
    [InlineData("0001 0000 0006 01 05 0000 000a", "fc = 5 not allowed")]
    [InlineData("0001 0000 0006 01 03 0064 000a", "readAt = 100 not allowed")]
    [InlineData("0001 0000 0006 01 03 0000 007e", "count = 126 not allowed")]
    [InlineData("0001 0000 0006 01 03 0000 0000", "count = 0 not allowed")]
    [InlineData("0001 0000 0006 01 06 018f 0001", "writeAt = 399 not allowed")]
    [InlineData("0001 0001 0006 01 03 0000 000a", "proto = 1 not allowed")]
    [InlineData("0001 0000 0007 01 03 0000 000a", "len = 7, but 6 bytes follow byte 6")]
    [InlineData("0001 0000 0005 01 03 0000 00", "11 bytes, allowed 12 to 260")]
    public void Modbus_format_refuses(string hex, string why) => T.Denied(Evaluator(Modbus).Decide(0, 1, 1, T.Hex(hex)), "modbus", why);

    [Fact]
    public void Binary_fields_read_little_endian_when_asked()
    {
        var e = Evaluator("""
            "formats": [{ "name": "b", "kind": "binary", "fields": [{ "name": "v", "offset": 0, "length": 4, "endian": "little", "values": [258] }, { "name": "w", "offset": 4, "length": 2, "required": false, "values": [1] }] }],
            "rules": [{ "name": "b", "action": "allow", "from": "any", "to": "any", "format": "b" }]
            """);
        T.Allowed(e.Decide(0, 1, 1, T.Hex("02010000")), "b");
        T.Allowed(e.Decide(0, 1, 1, T.Hex("02010000 0001")), "b");
        T.Denied(e.Decide(0, 1, 1, T.Hex("00000102")), "b", "v = 33619968");
        T.Denied(e.Decide(0, 1, 1, T.Hex("020100")), "b", "missing");
    }

    private const string Patterns = """
        "patternSets": [
          { "name": "exact", "literals": ["DROP TABLE", "evil"], "hex": ["00ff00"] },
          { "name": "folded", "caseInsensitive": true, "literals": ["<script"] },
          { "name": "regex", "regexes": ["[0-9]{3}-[0-9]{4}", "(?i)pass(word)?="] }
        ],
        "rules": [
          { "name": "no-malware", "action": "deny", "from": "any", "to": "any", "contains": ["exact"] },
          { "name": "screened", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["folded", "regex"] }
        ]
        """;

    [Theory]
    [InlineData("hello world")]
    [InlineData("drop table is fine in lower case")]
    [InlineData("EVIL in upper case is fine too")]
    [InlineData("<scrip t>")]
    [InlineData("12-3456")]
    public void Patterns_let_clean_payloads_through(string payload) => T.Allowed(Evaluator(Patterns).Decide(0, 1, 1, payload), "screened");

    [Theory]
    [InlineData("x; DROP TABLE users", "no-malware", "\"DROP TABLE\"")]
    [InlineData("so evil", "no-malware", "\"evil\"")]
    [InlineData("<ScRiPt>alert(1)", "screened", "pattern set folded: pattern \"<script\"")]
    [InlineData("call 555-1234 now", "screened", "pattern set regex")]
    [InlineData("user=a&PASS=b", "screened", "pattern set regex")]
    public void Patterns_deny_with_the_pattern_named(string payload, string rule, string why) =>
        T.Denied(Evaluator(Patterns).Decide(0, 1, 1, payload), rule, why);

    [Fact]
    public void Binary_literals_match_bytes()
    {
        T.Denied(Evaluator(Patterns).Decide(0, 1, 1, T.Hex("0102 00ff00 03")), "no-malware", "\\x00\\xff\\x00");
    }

    [Fact]
    public void Rates_count_per_sender_over_agreed_time_windows()
    {
        var e = Evaluator("""
            "rates": [{ "name": "three-per-second", "window": "1s", "messages": 3 }, { "name": "quota", "window": "1h", "bytes": 50 }],
            "rules": [{ "name": "limited", "action": "allow", "from": "any", "to": "any", "rates": ["three-per-second", "quota"] }]
            """);
        var t = T.At("2026-11-24T10:00:00Z");
        for (var i = 0; i < 3; i++)
        {
            T.Allowed(e.Decide(t + i, 1, 1, "x"), "limited");
        }
        T.Denied(e.Decide(t + 10, 1, 1, "x"), "limited", "rate three-per-second: 3 messages");
        T.Allowed(e.Decide(t + 10, 2, 1, "x"), "limited"); // per sender
        // Half-way through the next window half of the previous count still weighs: 1.5 + 0 < 3 allows one more...
        T.Allowed(e.Decide(t + 1500, 1, 1, "x"), "limited");
        T.Allowed(e.Decide(t + 1500, 1, 1, "x"), "limited");
        T.Denied(e.Decide(t + 1500, 1, 1, "x"), "limited", "rate three-per-second");
        // ...and two windows later nothing of it is left.
        T.Allowed(e.Decide(t + 3000, 1, 1, "x"), "limited");
        // The hourly byte quota: 6 bytes used so far by sender 1.
        T.Allowed(e.Decide(t + 4000, 1, 1, new string('y', 44)), "limited");
        T.Denied(e.Decide(t + 5000, 1, 1, "z"), "limited", "rate quota: 50 bytes");
        T.Allowed(e.Decide(t + 3_600_000 * 2, 1, 1, "z"), "limited");
    }

    [Fact]
    public void Denied_messages_do_not_count_against_a_rate()
    {
        var e = Evaluator("""
            "formats": [{ "name": "j", "kind": "json", "fields": [{ "name": "a", "path": "/a", "type": "integer" }] }],
            "rates": [{ "name": "two", "window": "1m", "messages": 2 }],
            "rules": [{ "name": "r", "action": "allow", "from": "any", "to": "any", "format": "j", "rates": ["two"] }]
            """);
        for (var i = 0; i < 5; i++)
        {
            T.Denied(e.Decide(i, 1, 1, "{}"), "r", "required");
        }
        T.Allowed(e.Decide(10, 1, 1, """{"a":1}"""), "r");
        T.Allowed(e.Decide(11, 1, 1, """{"a":1}"""), "r");
        T.Denied(e.Decide(12, 1, 1, """{"a":1}"""), "r", "rate two");
    }

    private const string Sbo = """
        "formats": [{ "name": "cmd", "kind": "json", "messageType": "action", "fields": [{ "name": "action", "path": "/action", "type": "string" }] }],
        "flows": [{
          "name": "sbo", "initial": "idle", "idleTimeout": "10s",
          "transitions": [
            { "from": "idle", "on": ["select"], "to": "selected" },
            { "from": "selected", "on": ["operate", "cancel"], "to": "idle" },
            { "from": "*", "on": ["read"] }
          ]
        }],
        "rules": [{ "name": "commands", "action": "allow", "from": "any", "to": "any", "format": "cmd", "flow": "sbo" }]
        """;

    private static string Cmd(string action) => $$"""{"action":"{{action}}"}""";

    [Fact]
    public void Flow_state_machines_enforce_message_order_per_flow()
    {
        var e = Evaluator(Sbo);
        T.Denied(e.Decide(0, 1, 7, Cmd("operate")), "commands", "request type operate not allowed in state idle");
        T.Allowed(e.Decide(1, 1, 7, Cmd("read")), "commands");
        T.Allowed(e.Decide(2, 1, 7, Cmd("select")), "commands");
        T.Denied(e.Decide(3, 2, 7, Cmd("operate")), "commands"); // another sender: another flow
        T.Denied(e.Decide(3, 1, 8, Cmd("operate")), "commands"); // another receiver: another flow
        T.Allowed(e.Decide(4, 1, 7, Cmd("read")), "commands");
        T.Denied(e.Decide(5, 1, 7, Cmd("select")), "commands", "select not allowed in state selected");
        T.Allowed(e.Decide(6, 1, 7, Cmd("operate")), "commands");
        T.Denied(e.Decide(7, 1, 7, Cmd("operate")), "commands");
        T.Denied(e.Decide(8, 1, 7, Cmd("reboot")), "commands", "reboot not allowed");
    }

    [Fact]
    public void A_flow_idle_longer_than_its_timeout_starts_again()
    {
        var e = Evaluator(Sbo);
        T.Allowed(e.Decide(0, 1, 7, Cmd("select")), "commands");
        T.Denied(e.Decide(20_000, 1, 7, Cmd("operate")), "commands", "state idle");
    }

    [Fact]
    public void Outstanding_requests_are_bounded_and_responses_must_answer_one()
    {
        var e = Evaluator("""
            "formats": [{ "name": "any-bytes", "kind": "binary", "fields": [{ "name": "b", "offset": 0, "length": 1 }] }],
            "flows": [{ "name": "rpc", "initial": "open", "maxOutstanding": 2 }],
            "rules": [
              { "name": "requests", "action": "allow", "from": { "senders": [1] }, "to": { "receivers": [100] }, "flow": "rpc" },
              { "name": "responses", "action": "allow", "from": { "senders": [100] }, "to": { "receivers": [1] }, "flow": "rpc", "flowRole": "response" }
            ],
            "senders": [{ "id": 1 }, { "id": 100 }],
            "receivers": [{ "id": 1 }, { "id": 100 }]
            """);
        T.Denied(e.Decide(0, 100, 1, "r"), "responses", "no outstanding request");
        T.Allowed(e.Decide(1, 1, 100, "q"), "requests");
        T.Allowed(e.Decide(2, 1, 100, "q"), "requests");
        T.Denied(e.Decide(3, 1, 100, "q"), "requests", "2 requests already outstanding, limit 2");
        T.Allowed(e.Decide(4, 100, 1, "r"), "responses");
        T.Allowed(e.Decide(5, 1, 100, "q"), "requests");
    }

    [Fact]
    public void Integer_message_types_match_their_decimal_text()
    {
        var e = Evaluator("""
            "formats": [{ "name": "m", "kind": "binary", "messageType": "fc", "fields": [{ "name": "fc", "offset": 0, "length": 1 }] }],
            "flows": [{ "name": "f", "initial": "a", "transitions": [{ "from": "a", "on": [1], "to": "b" }, { "from": "b", "on": ["2"], "to": "a" }] }],
            "rules": [{ "name": "r", "action": "allow", "from": "any", "to": "any", "format": "m", "flow": "f" }]
            """);
        T.Denied(e.Decide(0, 1, 1, T.Hex("02")), "r");
        T.Allowed(e.Decide(1, 1, 1, T.Hex("01")), "r");
        T.Allowed(e.Decide(2, 1, 1, T.Hex("02")), "r");
    }

    [Fact]
    public void Time_of_day_windows_use_agreed_utc_time_and_may_wrap_past_midnight()
    {
        var e = Evaluator("""
            "windows": [
              { "name": "office", "spans": [{ "days": ["mon", "tue", "wed", "thu", "fri"], "from": "08:00", "to": "17:30" }] },
              { "name": "night", "spans": [{ "days": ["fri"], "from": "22:00", "to": "02:00" }, { "days": ["sun"], "from": "00:00", "to": "24:00" }] }
            ],
            "rules": [
              { "name": "office-hours", "action": "allow", "from": "any", "to": "any", "during": ["office"] },
              { "name": "night-work", "action": "allow", "from": "any", "to": "any", "during": ["night"] }
            ]
            """);
        T.Allowed(e.Decide(T.At("2026-11-24T08:00:00Z"), 1, 1, "x"), "office-hours");        // Tuesday
        T.Allowed(e.Decide(T.At("2026-11-24T17:29:59.999Z"), 1, 1, "x"), "office-hours");
        T.Denied(e.Decide(T.At("2026-11-24T17:30:00Z"), 1, 1, "x"), RuleDecision.DefaultDeny);
        T.Denied(e.Decide(T.At("2026-11-24T07:59:59Z"), 1, 1, "x"), RuleDecision.DefaultDeny);
        T.Denied(e.Decide(T.At("2026-11-28T10:00:00Z"), 1, 1, "x"), RuleDecision.DefaultDeny);  // Saturday
        T.Allowed(e.Decide(T.At("2026-11-27T23:00:00Z"), 1, 1, "x"), "night-work");           // Friday night
        T.Allowed(e.Decide(T.At("2026-11-28T01:59:00Z"), 1, 1, "x"), "night-work");           // ... into Saturday
        T.Denied(e.Decide(T.At("2026-11-28T02:00:00Z"), 1, 1, "x"), RuleDecision.DefaultDeny);
        T.Denied(e.Decide(T.At("2026-11-28T23:00:00Z"), 1, 1, "x"), RuleDecision.DefaultDeny);  // Saturday night: no span
        T.Allowed(e.Decide(T.At("2026-11-29T23:59:00Z"), 1, 1, "x"), "night-work");           // Sunday, all day
        T.Denied(e.Decide(T.At("2026-11-30T00:00:00Z"), 1, 1, "x"), RuleDecision.DefaultDeny);  // Monday 00:00
        T.Allowed(e.Decide(T.At("1969-12-31T09:00:00Z"), 1, 1, "x"), "office-hours");        // before the epoch: a Wednesday
    }

    [Fact]
    public void Quarantine_accumulates_suspicion_and_decays_to_release()
    {
        var e = Evaluator("""
            "formats": [{ "name": "j", "kind": "json", "fields": [{ "name": "a", "path": "/a", "type": "integer" }] }],
            "patternSets": [{ "name": "bad", "literals": ["attack"] }],
            "quarantine": { "threshold": 100, "release": 50, "decayPerSecond": 10, "increments": { "default": 10, "format": 30, "pattern": 60 } },
            "senders": [{ "id": 1 }],
            "rules": [
              { "name": "watch", "action": "deny", "from": { "senders": [1] }, "to": "any", "contains": ["bad"], "suspicion": 0 },
              { "name": "json", "action": "allow", "from": "any", "to": "any", "format": "j", "rejectPatterns": ["bad"] }
            ]
            """);
        T.Denied(e.Decide(0, 1, 1, "attack"), "watch");           // suspicion 0 by the rule's own weight
        T.Denied(e.Decide(0, 2, 1, "{}"), "json");                // 30
        T.Denied(e.Decide(0, 2, 1, "{\"a\":\"attack\"}"), "json"); // 60: the format fails before the patterns are looked at
        var q = e.Decide(0, 2, 1, "{\"a\":1,\"b\":\"attack\"}");   // pattern: 120 -> quarantined
        T.Denied(q, "json", "sender 2 quarantined");
        T.Denied(e.Decide(1000, 2, 1, "{\"a\":1}"), RuleDecision.QuarantineRule, "suspicion 110");
        T.Allowed(e.Decide(1000, 1, 1, "{\"a\":1}"), "json");     // other senders are not affected
        // 120 - 10/s: below the release threshold 50 just after 7 s.
        T.Denied(e.Decide(7_000, 2, 1, "{\"a\":1}"), RuleDecision.QuarantineRule);
        T.Allowed(e.Decide(7_001, 2, 1, "{\"a\":1}"), "json");
        Assert.Equal(1, e.Stats.Quarantines);
    }
}
