namespace SieveQ.Rules.Tests;

/// <summary>A rule that names something the document does not define refuses the whole document, naming the place.</summary>
public sealed class ReferenceTests
{
    private const string Declarations = """
        "senders": [{ "id": 1 }, { "id": 2 }],
        "senderGroups": [{ "name": "g", "senders": [1, 2] }],
        "receivers": [{ "id": 100 }, { "id": 101 }],
        "topics": [{ "name": "t", "receivers": [100, 101] }],
        "formats": [{ "name": "f", "kind": "json", "fields": [{ "name": "a", "path": "/a", "type": "string" }] }],
        "patternSets": [{ "name": "p", "literals": ["x"] }],
        "rates": [{ "name": "r", "window": "1s", "messages": 5 }],
        "windows": [{ "name": "w", "spans": [{ "from": "08:00", "to": "17:00" }] }],
        "flows": [{ "name": "fl", "initial": "s", "maxOutstanding": 1 }],
        """;

    private static RuleSetException Refused(string rule, string? extra = null) =>
        T.Refused(T.Doc(Declarations + (extra ?? "") + "\"rules\": [" + rule + "]"));

    [Fact]
    public void The_declarations_themselves_compile()
    {
        Assert.Equal(1, T.Compile(T.Doc(Declarations + """
            "rules": [{ "name": "ok", "action": "allow", "from": { "groups": ["g"] }, "to": { "topics": ["t"] }, "during": ["w"],
                        "format": "f", "rejectPatterns": ["p"], "rates": ["r"], "flow": "fl" }]
            """)).Summary.Rules);
    }

    [Theory]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": { "receivers": [102] } }""", "/rules/0/to/receivers/0", "receiver 102")]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": { "receivers": [100], "topics": ["t", "nope"] } }""", "/rules/0/to/topics/1", "unknown topic \"nope\"")]
    [InlineData("""{ "name": "x", "action": "allow", "from": { "senders": [3] }, "to": "any" }""", "/rules/0/from/senders/0", "sender 3")]
    [InlineData("""{ "name": "x", "action": "allow", "from": { "groups": ["h"] }, "to": "any" }""", "/rules/0/from/groups/0", "unknown sender group")]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": "any", "format": "g" }""", "/rules/0/format", "unknown format \"g\"")]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["p", "q"] }""", "/rules/0/rejectPatterns/1", "unknown pattern set \"q\"")]
    [InlineData("""{ "name": "x", "action": "deny", "from": "any", "to": "any", "contains": ["q"] }""", "/rules/0/contains/0", "unknown pattern set")]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": "any", "rates": ["s"] }""", "/rules/0/rates/0", "unknown rate")]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": "any", "during": ["v"] }""", "/rules/0/during/0", "unknown window")]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": "any", "flow": "fm" }""", "/rules/0/flow", "unknown flow")]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": "any", "flowRole": "response" }""", "/rules/0/flowRole", "without a flow")]
    [InlineData("""{ "name": "default-deny", "action": "allow", "from": "any", "to": "any" }""", "/rules/0/name", "reserved")]
    [InlineData("""{ "name": "x", "action": "allow", "from": "any", "to": "any" }, { "name": "x", "action": "deny", "from": "any", "to": "any" }""", "/rules/1/name", "duplicate rule name")]
    public void Unknown_references_are_refused_with_their_path(string rule, string path, string message)
    {
        var e = Refused(rule);
        Assert.Equal(RuleSetErrorKind.Reference, e.Kind);
        Assert.Equal(path, e.Path);
        Assert.Contains(message, e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{ "name": "g2", "senders": [9] }""", "senderGroups", "/senderGroups/1/senders/0")]
    [InlineData("""{ "name": "t2", "receivers": [100, 7] }""", "topics", "/topics/1/receivers/1")]
    [InlineData("""{ "name": "g", "senders": [1] }""", "senderGroups", "/senderGroups/1/name")]
    public void Groups_and_topics_may_only_name_declared_parties(string item, string member, string path)
    {
        // The new item goes after the existing one, so its index in the path is 1.
        var existing = member == "topics" ? "\"receivers\": [100, 101] }]" : "\"senders\": [1, 2] }]";
        var json = T.Doc(Declarations.Replace(existing, existing[..^1] + ", " + item + "]", StringComparison.Ordinal) + "\"rules\": []");
        var e = T.Refused(json);
        Assert.Equal(path, e.Path);
    }

    [Fact]
    public void A_flow_that_reads_message_types_needs_a_format_that_has_one()
    {
        var e = T.Refused(T.Doc("""
            "formats": [{ "name": "f", "kind": "json", "fields": [{ "name": "a", "path": "/a", "type": "string" }] }],
            "flows": [{ "name": "fl", "initial": "s", "transitions": [{ "from": "s", "on": ["go"], "to": "s" }] }],
            "rules": [{ "name": "x", "action": "allow", "from": "any", "to": "any", "format": "f", "flow": "fl" }]
            """));
        Assert.Equal("/rules/0/flow", e.Path);
    }

    [Theory]
    [InlineData("""{ "name": "fl", "initial": "a", "transitions": [{ "from": "b", "on": ["x"], "to": "a" }] }""", "/flows/0/transitions/0/from", "never entered")]
    [InlineData("""{ "name": "fl", "initial": "a", "transitions": [{ "from": "a", "on": ["x"] }, { "from": "a", "on": ["y", "x"] }] }""", "/flows/0/transitions/1/on/1", "already has")]
    public void Flow_machines_are_checked(string flow, string path, string message)
    {
        var e = T.Refused(T.Doc($"\"flows\": [{flow}], \"rules\": []"));
        Assert.Equal(path, e.Path);
        Assert.Contains(message, e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{ "name": "m", "kind": "binary", "messageType": "fc", "fields": [{ "name": "a", "offset": 0, "length": 1 }] }""", "/formats/0/messageType")]
    [InlineData("""{ "name": "m", "kind": "binary", "fields": [{ "name": "a", "offset": 0, "length": 1, "when": { "field": "b", "values": [1] } }, { "name": "b", "offset": 1, "length": 1 }] }""", "/formats/0/fields/0/when/field")]
    [InlineData("""{ "name": "m", "kind": "binary", "maxBytes": 4, "fields": [{ "name": "a", "offset": 3, "length": 2 }] }""", "/formats/0/fields/0/offset")]
    [InlineData("""{ "name": "m", "kind": "json", "fields": [{ "name": "a", "path": "/a", "type": "string" }, { "name": "b", "path": "/a/b", "type": "string" }] }""", "/formats/0/fields/1/path")]
    [InlineData("""{ "name": "m", "kind": "json", "fields": [{ "name": "a", "path": "/a", "type": "string", "regex": "(?<=x)y" }] }""", "/formats/0/fields/0/regex")]
    [InlineData("""{ "name": "m", "kind": "json", "messageType": "a", "fields": [{ "name": "a", "path": "/a", "type": "boolean" }] }""", "/formats/0/messageType")]
    public void Formats_are_checked(string format, string path)
    {
        var e = T.Refused(T.Doc($"\"formats\": [{format}], \"rules\": []"));
        Assert.Equal(path, e.Path);
    }

    [Fact]
    public void A_regex_the_linear_engine_cannot_run_is_refused()
    {
        var e = T.Refused(T.Doc("""
            "patternSets": [{ "name": "p", "regexes": ["ok", "(a)\\1"] }],
            "rules": []
            """));
        Assert.Equal("/patternSets/0/regexes/1", e.Path);
    }
}
