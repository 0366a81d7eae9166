using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using SieveQ.Rules.Json;
using SieveQ.Rules.Schema;

namespace SieveQ.Rules.Document;

/// <summary>
/// Bytes to <see cref="RuleSetDocument"/>: JSON syntax (no duplicate members, bounded depth and size),
/// the RFC 8785 canonical form, the published schema, then binding. References between elements are
/// the compiler's job. Throws only <see cref="RuleSetException"/>.
/// </summary>
public static class RuleSetParser
{
    public const int MaxDocumentBytes = 16 << 20;

    public const int MaxDepth = 32;

    /// <summary>Syntax, schema and binding; no signature check (see <see cref="RuleSetLoader"/>).</summary>
    public static RuleSetDocument Parse(ReadOnlyMemory<byte> json)
    {
        using var doc = ReadJson(json);
        var canonical = Canonicalize(doc.RootElement);
        CheckSchema(doc.RootElement);
        return Bind(doc.RootElement, canonical);
    }

    public static JsonDocument ReadJson(ReadOnlyMemory<byte> json)
    {
        if (json.Length > MaxDocumentBytes)
        {
            throw new RuleSetException(RuleSetErrorKind.Limit, "", $"document is {json.Length} bytes, the limit is {MaxDocumentBytes}");
        }
        try
        {
            return JsonDocument.Parse(json, new JsonDocumentOptions { AllowDuplicateProperties = false, MaxDepth = MaxDepth });
        }
        catch (JsonException e)
        {
            var where = e.LineNumber is { } line ? $" (line {line + 1}, byte {e.BytePositionInLine + 1})" : "";
            throw new RuleSetException(RuleSetErrorKind.Syntax, "", $"not valid JSON{where}: {FirstSentence(e.Message)}", e);
        }
    }

    public static byte[] Canonicalize(JsonElement root)
    {
        try
        {
            return JsonCanonicalizer.Canonicalize(root);
        }
        catch (FormatException e)
        {
            var colon = e.Message.IndexOf(": ", StringComparison.Ordinal);
            var path = colon > 0 && e.Message.StartsWith('/') ? e.Message[..colon] : "";
            throw new RuleSetException(RuleSetErrorKind.Syntax, path, colon > 0 ? e.Message[(colon + 2)..] : e.Message, e);
        }
    }

    public static void CheckSchema(JsonElement root)
    {
        if (RuleSetSchema.Instance.FirstError(root) is { } error)
        {
            throw new RuleSetException(RuleSetErrorKind.Schema, error.InstancePath, error.Message);
        }
    }

    public static RuleSetDocument Bind(JsonElement rootElement, byte[] canonical)
    {
        var root = new JsonNode(rootElement, "");
        if (root.OptString("schema") != RuleSetDocument.SchemaId)
        {
            throw root.Error($"\"schema\" must be \"{RuleSetDocument.SchemaId}\"");
        }
        var limits = RuleSetLimits.Default;
        if (root.Optional("limits") is { } l)
        {
            limits = new RuleSetLimits(
                l.OptInt("maxMessageBytes") ?? limits.MaxMessageBytes,
                l.OptInt("maxSenders") ?? limits.MaxSenders,
                l.OptInt("maxFlows") ?? limits.MaxFlows);
        }
        return new RuleSetDocument
        {
            Version = root["version"].Int(),
            Name = root.OptString("name"),
            Limits = limits,
            Senders = List(root, "senders", Party),
            SenderGroups = List(root, "senderGroups", n => Group(n, "senders")),
            Receivers = List(root, "receivers", Party),
            Topics = List(root, "topics", n => Group(n, "receivers")),
            Formats = List(root, "formats", Format),
            PatternSets = List(root, "patternSets", PatternSet),
            Rates = List(root, "rates", Rate),
            Windows = List(root, "windows", Window),
            Flows = List(root, "flows", Flow),
            Quarantine = root.Optional("quarantine") is { } q ? Quarantine(q) : null,
            Rules = List(root, "rules", Rule),
            CanonicalBytes = canonical,
            Digest = SHA256.HashData(canonical),
        };
    }

    private static List<T> List<T>(JsonNode root, string member, Func<JsonNode, T> bind) =>
        root.Optional(member)?.Items().Select(bind).ToList() ?? [];

    private static PartySpec Party(JsonNode n) => new(n.Path, n["id"].Int(), n.OptString("name"));

    private static GroupSpec Group(JsonNode n, string members) => new(n.Path, n["name"].String(), n[members].Items().Select(i => i.Int()).ToList());

    private static FormatSpec Format(JsonNode n)
    {
        var kind = n["kind"].String() == "json" ? FormatKind.Json : FormatKind.Binary;
        return new FormatSpec(
            n.Path,
            n["name"].String(),
            kind,
            n.OptInt("minBytes"),
            n.OptInt("maxBytes"),
            n.OptInt("maxDepth") ?? 16,
            n.OptString("otherFields") == "deny",
            n.OptString("messageType"),
            kind == FormatKind.Json ? n["fields"].Items().Select(JsonField).ToList() : [],
            kind == FormatKind.Binary ? n["fields"].Items().Select(BinaryField).ToList() : []);
    }

    private static JsonFieldSpec JsonField(JsonNode n) => new(
        n.Path,
        n["name"].String(),
        n["path"].String(),
        n["type"].String() switch
        {
            "string" => JsonFieldType.String,
            "integer" => JsonFieldType.Integer,
            "number" => JsonFieldType.Number,
            "boolean" => JsonFieldType.Boolean,
            "null" => JsonFieldType.Null,
            "object" => JsonFieldType.Object,
            _ => JsonFieldType.Array,
        },
        n.OptBool("required", true),
        Numbers(n),
        n.OptStrings("enum"),
        n.OptInt("minLength"),
        n.OptInt("maxLength"),
        n.OptString("regex"));

    private static BinaryFieldSpec BinaryField(JsonNode n)
    {
        var when = n.Optional("when");
        return new BinaryFieldSpec(
            n.Path,
            n["name"].String(),
            n["offset"].Int(),
            n["length"].Int(),
            n.OptString("endian") != "little",
            n.OptBool("required", true),
            when?["field"].String(),
            when?["values"].Items().Select(v => v.Long()).ToList(),
            Numbers(n),
            n.OptInt("lengthFrom"));
    }

    private static ValueConstraint Numbers(JsonNode n) => new(
        n.Optional("min")?.Double(),
        n.Optional("max")?.Double(),
        n.Optional("values")?.Items().Select(v => v.Long()).ToList(),
        n.Optional("ranges")?.Items().Select(r =>
        {
            var pair = r.Items().ToList();
            return (pair[0].Long(), pair[1].Long());
        }).ToList());

    private static PatternSetSpec PatternSet(JsonNode n)
    {
        var literals = new List<byte[]>();
        foreach (var s in n.Optional("literals")?.Items() ?? [])
        {
            literals.Add(Encoding.UTF8.GetBytes(s.String()));
        }
        foreach (var h in n.Optional("hex")?.Items() ?? [])
        {
            literals.Add(Convert.FromHexString(h.String()));
        }
        return new PatternSetSpec(n.Path, n["name"].String(), n.OptBool("caseInsensitive", false), literals, n.OptStrings("regexes") ?? []);
    }

    private static RateSpec Rate(JsonNode n) => new(n.Path, n["name"].String(), Duration(n["window"]), n.OptLong("messages"), n.OptLong("bytes"));

    private static WindowSpec Window(JsonNode n) => new(n.Path, n["name"].String(), n["spans"].Items().Select(Span).ToList());

    private static SpanSpec Span(JsonNode n)
    {
        var days = 0;
        foreach (var d in n.Optional("days")?.Items() ?? [])
        {
            days |= 1 << Array.IndexOf(DayNames, d.String());
        }
        var from = Minute(n["from"]);
        var to = Minute(n["to"]);
        if (from == to)
        {
            throw n["to"].Error("a span must not end where it starts (use 00:00 to 24:00 for a whole day)");
        }
        return new SpanSpec(days == 0 ? 0x7F : days, from, to);
    }

    internal static readonly string[] DayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

    private static FlowSpec Flow(JsonNode n) => new(
        n.Path,
        n["name"].String(),
        n["initial"].String(),
        n.Optional("transitions")?.Items().Select(Transition).ToList() ?? [],
        n.OptInt("maxOutstanding"),
        n.Optional("idleTimeout") is { } t ? Duration(t) : null);

    private static TransitionSpec Transition(JsonNode n)
    {
        var from = n["from"].String();
        return new TransitionSpec(
            n.Path,
            from == "*" ? null : from,
            n["on"].Items().Select(MessageType).ToList(),
            n.OptString("to"),
            n.OptString("role") == "response" ? FlowRole.Response : FlowRole.Request);
    }

    internal static string MessageType(JsonNode n) => n.Element.ValueKind == JsonValueKind.String
        ? n.String()
        : n.Long().ToString(CultureInfo.InvariantCulture);

    private static QuarantineSpec Quarantine(JsonNode n)
    {
        var threshold = n["threshold"].Int();
        var release = n.OptInt("release") ?? threshold / 2;
        if (release > threshold)
        {
            throw n["release"].Error("release must not be above threshold");
        }
        var increments = new Dictionary<ViolationKind, int>();
        var inc = n.Optional("increments");
        var fallback = inc?.OptInt("default") ?? 10;
        foreach (var kind in Enum.GetValues<ViolationKind>())
        {
            increments[kind] = inc?.OptInt(kind.ToString().ToLowerInvariant()) ?? fallback;
        }
        return new QuarantineSpec(threshold, release, n["decayPerSecond"].Int(), increments);
    }

    private static RuleSpec Rule(JsonNode n)
    {
        var from = n["from"];
        var to = n["to"];
        var anyFrom = from.Element.ValueKind == JsonValueKind.String;
        var anyTo = to.Element.ValueKind == JsonValueKind.String;
        return new RuleSpec(
            n.Path,
            n["name"].String(),
            n["action"].String() == "allow" ? RuleAction.Allow : RuleAction.Deny,
            anyFrom ? null : from.OptInts("senders") ?? [],
            anyFrom ? null : from.OptStrings("groups") ?? [],
            anyTo ? null : to.OptInts("receivers") ?? [],
            anyTo ? null : to.OptStrings("topics") ?? [],
            n.OptStrings("during"),
            n.OptInt("maxBytes"),
            n.OptString("format"),
            n.OptStrings("rejectPatterns"),
            n.OptStrings("rates"),
            n.OptString("flow"),
            n.OptString("flowRole") == "response" ? FlowRole.Response : FlowRole.Request,
            n.OptStrings("contains"),
            n.OptInt("suspicion"));
    }

    internal static long Duration(JsonNode n)
    {
        var s = n.String();
        var unitAt = s.Length - (s.EndsWith("ms", StringComparison.Ordinal) ? 2 : 1);
        if (!long.TryParse(s.AsSpan(0, unitAt), NumberStyles.None, CultureInfo.InvariantCulture, out var count))
        {
            throw n.Error("not a duration");
        }
        return s[unitAt..] switch
        {
            "ms" => count,
            "s" => count * 1000,
            "m" => count * 60_000,
            "h" => count * 3_600_000,
            "d" => count * 86_400_000,
            _ => throw n.Error("not a duration"),
        };
    }

    private static int Minute(JsonNode n)
    {
        var s = n.String();
        if (s.Length != 5 || s[2] != ':'
            || !int.TryParse(s.AsSpan(0, 2), NumberStyles.None, CultureInfo.InvariantCulture, out var h)
            || !int.TryParse(s.AsSpan(3, 2), NumberStyles.None, CultureInfo.InvariantCulture, out var m))
        {
            throw n.Error("not a time of day");
        }
        return h * 60 + m;
    }

    private static string FirstSentence(string message)
    {
        var dot = message.IndexOf(". ", StringComparison.Ordinal);
        return dot > 0 ? message[..dot] : message.TrimEnd('.');
    }
}
