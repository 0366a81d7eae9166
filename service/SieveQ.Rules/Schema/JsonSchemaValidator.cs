using System.Collections.Frozen;
using System.Text.Json;
using System.Text.RegularExpressions;
using SieveQ.Rules.Json;

namespace SieveQ.Rules.Schema;

/// <summary>
/// A JSON Schema (draft 2020-12) validator for the keywords the published rule-set schema uses. A schema
/// that uses any other keyword is refused when it is loaded, so "valid here" always means "valid for
/// every conforming validator" rather than "valid because an unknown keyword was ignored". Only local
/// references (#/$defs/...) are resolved. "pattern" runs on the linear-time regex engine.
/// </summary>
public sealed class JsonSchemaValidator : IDisposable
{
    public const string Draft202012 = "https://json-schema.org/draft/2020-12/schema";

    private static readonly FrozenSet<string> Annotations = FrozenSet.Create(StringComparer.Ordinal,
        "$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$defs");

    private static readonly FrozenSet<string> Assertions = FrozenSet.Create(StringComparer.Ordinal,
        "$ref", "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "pattern", "items", "minItems", "maxItems", "uniqueItems",
        "properties", "required", "additionalProperties", "minProperties", "maxProperties",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else");

    private static readonly FrozenSet<string> Types = FrozenSet.Create(StringComparer.Ordinal,
        "null", "boolean", "object", "array", "number", "string", "integer");

    private readonly JsonDocument _document;
    private readonly Dictionary<string, Regex> _patterns = new(StringComparer.Ordinal);

    private JsonSchemaValidator(JsonDocument document)
    {
        _document = document;
    }

    public JsonElement Root => _document.RootElement;

    /// <summary>Loads a schema; <see cref="FormatException"/> when it is not JSON, not 2020-12, or uses an unsupported keyword.</summary>
    public static JsonSchemaValidator Load(ReadOnlyMemory<byte> schemaJson)
    {
        JsonDocument doc;
        try
        {
            doc = JsonDocument.Parse(schemaJson, new JsonDocumentOptions { AllowDuplicateProperties = false, MaxDepth = 128 });
        }
        catch (JsonException e)
        {
            throw new FormatException($"schema is not JSON: {e.Message}", e);
        }
        var v = new JsonSchemaValidator(doc);
        try
        {
            var root = doc.RootElement;
            if (root.ValueKind != JsonValueKind.Object
                || !root.TryGetProperty("$schema", out var dialect)
                || dialect.ValueKind != JsonValueKind.String
                || dialect.GetString() != Draft202012)
            {
                throw new FormatException($"schema must declare \"$schema\": \"{Draft202012}\"");
            }
            v.CheckSchema(root, "");
        }
        catch
        {
            doc.Dispose();
            throw;
        }
        return v;
    }

    public void Dispose() => _document.Dispose();

    /// <summary>The first error in document order, or null when the instance is valid.</summary>
    public SchemaError? FirstError(JsonElement instance)
    {
        var errors = Validate(instance, 1);
        return errors.Count == 0 ? null : errors[0];
    }

    public IReadOnlyList<SchemaError> Validate(JsonElement instance, int maxErrors = 100)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxErrors, 1);
        var sink = new Sink(maxErrors);
        Check(Root, instance, "", sink, 0);
        return sink.Errors;
    }

    /// <summary>Collects errors; a null sink means "only tell me whether it is valid" (if, anyOf, oneOf, not).</summary>
    private sealed class Sink(int max)
    {
        public List<SchemaError> Errors { get; } = [];

        public bool Full => Errors.Count >= max;

        public void Add(string path, string keyword, string message)
        {
            if (!Full)
            {
                Errors.Add(new SchemaError(path, keyword, message));
            }
        }
    }

    private const int MaxRecursion = 256;

    private bool Check(JsonElement schema, JsonElement inst, string path, Sink? sink, int depth)
    {
        if (depth > MaxRecursion)
        {
            return Fail(sink, path, "$ref", "schema recursion too deep");
        }
        if (schema.ValueKind == JsonValueKind.True)
        {
            return true;
        }
        if (schema.ValueKind == JsonValueKind.False)
        {
            return Fail(sink, path, "false", "no value is allowed here");
        }
        var ok = true;
        if (schema.TryGetProperty("$ref", out var r))
        {
            ok &= Check(Resolve(r.GetString()!), inst, path, sink, depth + 1);
            if (!ok && (sink is null || sink.Full))
            {
                return false;
            }
        }
        if (schema.TryGetProperty("type", out var type) && !TypeMatches(type, inst))
        {
            return Fail(sink, path, "type", $"must be {DescribeType(type)}, found {KindName(inst)}");
        }
        foreach (var keyword in schema.EnumerateObject())
        {
            if (!ok && (sink is null || sink.Full))
            {
                return false;
            }
            ok &= CheckKeyword(schema, keyword, inst, path, sink, depth);
        }
        return ok;
    }

    private bool CheckKeyword(JsonElement schema, JsonProperty keyword, JsonElement inst, string path, Sink? sink, int depth)
    {
        var k = keyword.Value;
        switch (keyword.Name)
        {
            case "const":
                return SameValue(k, inst) || Fail(sink, path, "const", $"must be {k.GetRawText()}");
            case "enum":
                foreach (var option in k.EnumerateArray())
                {
                    if (SameValue(option, inst))
                    {
                        return true;
                    }
                }
                return Fail(sink, path, "enum", $"must be one of {string.Join(", ", k.EnumerateArray().Select(o => o.GetRawText()))}");
            case "minimum" or "maximum" or "exclusiveMinimum" or "exclusiveMaximum" or "multipleOf":
                return inst.ValueKind != JsonValueKind.Number || CheckNumber(keyword.Name, k, inst, path, sink);
            case "minLength" or "maxLength" or "pattern":
                return inst.ValueKind != JsonValueKind.String || CheckString(keyword.Name, k, inst, path, sink);
            case "items" or "minItems" or "maxItems" or "uniqueItems":
                return inst.ValueKind != JsonValueKind.Array || CheckArray(keyword.Name, k, inst, path, sink, depth);
            case "required" or "properties" or "additionalProperties" or "minProperties" or "maxProperties":
                return inst.ValueKind != JsonValueKind.Object || CheckObject(schema, keyword.Name, k, inst, path, sink, depth);
            case "allOf":
            {
                var ok = true;
                foreach (var sub in k.EnumerateArray())
                {
                    ok &= Check(sub, inst, path, sink, depth + 1);
                    if (!ok && (sink is null || sink.Full))
                    {
                        return false;
                    }
                }
                return ok;
            }
            case "anyOf" or "oneOf":
                return CheckAlternatives(keyword.Name, k, inst, path, sink, depth);
            case "not":
                return !Check(k, inst, path, null, depth + 1) || Fail(sink, path, "not", "matches a schema it must not match");
            case "if":
            {
                var branch = Check(k, inst, path, null, depth + 1) ? "then" : "else";
                return !schema.TryGetProperty(branch, out var sub) || Check(sub, inst, path, sink, depth + 1);
            }
            default:
                return true; // annotations, $ref and type (handled first), then/else (through if)
        }
    }

    private static bool CheckNumber(string keyword, JsonElement k, JsonElement inst, string path, Sink? sink)
    {
        var c = Compare(inst, k);
        return keyword switch
        {
            "minimum" => c >= 0 || Fail(sink, path, keyword, $"must be at least {k.GetRawText()}"),
            "maximum" => c <= 0 || Fail(sink, path, keyword, $"must be at most {k.GetRawText()}"),
            "exclusiveMinimum" => c > 0 || Fail(sink, path, keyword, $"must be greater than {k.GetRawText()}"),
            "exclusiveMaximum" => c < 0 || Fail(sink, path, keyword, $"must be less than {k.GetRawText()}"),
            _ => IsMultiple(inst, k) || Fail(sink, path, keyword, $"must be a multiple of {k.GetRawText()}"),
        };
    }

    private bool CheckString(string keyword, JsonElement k, JsonElement inst, string path, Sink? sink)
    {
        string s;
        try
        {
            s = inst.GetString()!;
        }
        catch (InvalidOperationException)
        {
            return Fail(sink, path, keyword, "string is not valid UTF-16");
        }
        switch (keyword)
        {
            case "minLength":
            case "maxLength":
                var length = CodePoints(s);
                var bound = k.GetInt64();
                return keyword == "minLength"
                    ? length >= bound || Fail(sink, path, keyword, $"must be at least {bound} characters long")
                    : length <= bound || Fail(sink, path, keyword, $"must be at most {bound} characters long");
            default:
                return _patterns[k.GetString()!].IsMatch(s) || Fail(sink, path, keyword, $"must match the pattern {k.GetString()}");
        }
    }

    private bool CheckArray(string keyword, JsonElement k, JsonElement inst, string path, Sink? sink, int depth)
    {
        switch (keyword)
        {
            case "items":
            {
                var ok = true;
                var i = 0;
                foreach (var item in inst.EnumerateArray())
                {
                    ok &= Check(k, item, JsonPointer.Append(path, i++), sink, depth + 1);
                    if (!ok && (sink is null || sink.Full))
                    {
                        return false;
                    }
                }
                return ok;
            }
            case "minItems":
                return inst.GetArrayLength() >= k.GetInt64() || Fail(sink, path, keyword, $"must have at least {k.GetInt64()} items");
            case "maxItems":
                return inst.GetArrayLength() <= k.GetInt64() || Fail(sink, path, keyword, $"must have at most {k.GetInt64()} items");
            default:
            {
                if (k.ValueKind != JsonValueKind.True)
                {
                    return true;
                }
                var seen = new Dictionary<string, int>(StringComparer.Ordinal);
                var i = 0;
                foreach (var item in inst.EnumerateArray())
                {
                    var text = ComparableText(item);
                    if (seen.TryGetValue(text, out var first))
                    {
                        return Fail(sink, JsonPointer.Append(path, i), keyword, $"duplicates item {first}");
                    }
                    seen.Add(text, i++);
                }
                return true;
            }
        }
    }

    private bool CheckObject(JsonElement schema, string keyword, JsonElement k, JsonElement inst, string path, Sink? sink, int depth)
    {
        switch (keyword)
        {
            case "required":
                foreach (var name in k.EnumerateArray())
                {
                    if (!inst.TryGetProperty(name.GetString()!, out _))
                    {
                        return Fail(sink, path, keyword, $"missing required member \"{name.GetString()}\"");
                    }
                }
                return true;
            case "properties":
            {
                var ok = true;
                foreach (var member in inst.EnumerateObject())
                {
                    if (k.TryGetProperty(member.Name, out var sub))
                    {
                        ok &= Check(sub, member.Value, JsonPointer.Append(path, member.Name), sink, depth + 1);
                        if (!ok && (sink is null || sink.Full))
                        {
                            return false;
                        }
                    }
                }
                return ok;
            }
            case "additionalProperties":
            {
                var declared = schema.TryGetProperty("properties", out var p) ? p : default;
                var ok = true;
                foreach (var member in inst.EnumerateObject())
                {
                    if (declared.ValueKind == JsonValueKind.Object && declared.TryGetProperty(member.Name, out _))
                    {
                        continue;
                    }
                    var memberPath = JsonPointer.Append(path, member.Name);
                    ok &= k.ValueKind == JsonValueKind.False
                        ? Fail(sink, memberPath, keyword, $"member \"{member.Name}\" is not allowed here")
                        : Check(k, member.Value, memberPath, sink, depth + 1);
                    if (!ok && (sink is null || sink.Full))
                    {
                        return false;
                    }
                }
                return ok;
            }
            default:
            {
                var count = inst.EnumerateObject().Count();
                return keyword == "minProperties"
                    ? count >= k.GetInt64() || Fail(sink, path, keyword, $"must have at least {k.GetInt64()} members")
                    : count <= k.GetInt64() || Fail(sink, path, keyword, $"must have at most {k.GetInt64()} members");
            }
        }
    }

    /// <summary>
    /// anyOf / oneOf. When no alternative fits, the reported error is the one that got furthest into the
    /// instance (deepest path, and not a bare type mismatch when another alternative had the right type):
    /// that is the alternative the author meant.
    /// </summary>
    private bool CheckAlternatives(string keyword, JsonElement k, JsonElement inst, string path, Sink? sink, int depth)
    {
        var valid = 0;
        SchemaError? best = null;
        foreach (var sub in k.EnumerateArray())
        {
            var probe = new Sink(1);
            if (Check(sub, inst, path, probe, depth + 1))
            {
                valid++;
                continue;
            }
            var e = probe.Errors[0];
            if (best is null || Better(e, best.Value))
            {
                best = e;
            }
        }
        if (keyword == "anyOf" ? valid > 0 : valid == 1)
        {
            return true;
        }
        if (valid > 1)
        {
            return Fail(sink, path, keyword, "matches more than one alternative");
        }
        if (sink is not null && best is { } b)
        {
            sink.Add(b.InstancePath, b.Keyword, b.Message);
        }
        return false;
    }

    private static bool Better(SchemaError candidate, SchemaError current)
    {
        var c = Depth(candidate.InstancePath) - Depth(current.InstancePath);
        if (c != 0)
        {
            return c > 0;
        }
        return current.Keyword == "type" && candidate.Keyword != "type";
    }

    private static int Depth(string pointer) => pointer.Count(ch => ch == '/');

    private static bool Fail(Sink? sink, string path, string keyword, string message)
    {
        sink?.Add(path, keyword, message);
        return false;
    }

    private JsonElement Resolve(string reference)
    {
        if (!reference.StartsWith("#/$defs/", StringComparison.Ordinal))
        {
            throw new FormatException($"only local #/$defs references are supported, not {reference}");
        }
        var name = reference["#/$defs/".Length..].Replace("~1", "/", StringComparison.Ordinal).Replace("~0", "~", StringComparison.Ordinal);
        if (Root.TryGetProperty("$defs", out var defs) && defs.TryGetProperty(name, out var target))
        {
            return target;
        }
        throw new FormatException($"unresolved reference {reference}");
    }

    private static bool TypeMatches(JsonElement type, JsonElement inst)
    {
        if (type.ValueKind == JsonValueKind.String)
        {
            return OneTypeMatches(type.GetString()!, inst);
        }
        foreach (var t in type.EnumerateArray())
        {
            if (OneTypeMatches(t.GetString()!, inst))
            {
                return true;
            }
        }
        return false;
    }

    private static bool OneTypeMatches(string type, JsonElement inst) => type switch
    {
        "null" => inst.ValueKind == JsonValueKind.Null,
        "boolean" => inst.ValueKind is JsonValueKind.True or JsonValueKind.False,
        "object" => inst.ValueKind == JsonValueKind.Object,
        "array" => inst.ValueKind == JsonValueKind.Array,
        "string" => inst.ValueKind == JsonValueKind.String,
        "number" => inst.ValueKind == JsonValueKind.Number,
        _ => inst.ValueKind == JsonValueKind.Number && IsInteger(inst),
    };

    private static bool IsInteger(JsonElement n)
    {
        if (n.TryGetDecimal(out var m))
        {
            return m == decimal.Truncate(m);
        }
        return n.TryGetDouble(out var d) && double.IsFinite(d) && Math.Floor(d) == d;
    }

    private static string DescribeType(JsonElement type) => type.ValueKind == JsonValueKind.String
        ? Article(type.GetString()!)
        : string.Join(" or ", type.EnumerateArray().Select(t => Article(t.GetString()!)));

    private static string Article(string type) => type switch
    {
        "null" => "null",
        "array" or "object" or "integer" => "an " + type,
        _ => "a " + type,
    };

    private static string KindName(JsonElement inst) => inst.ValueKind switch
    {
        JsonValueKind.Object => "an object",
        JsonValueKind.Array => "an array",
        JsonValueKind.String => "a string",
        JsonValueKind.Number => IsInteger(inst) ? "an integer" : "a number",
        JsonValueKind.True or JsonValueKind.False => "a boolean",
        _ => "null",
    };

    private static int Compare(JsonElement a, JsonElement b)
    {
        if (a.TryGetDecimal(out var x) && b.TryGetDecimal(out var y))
        {
            return x.CompareTo(y);
        }
        var p = a.TryGetDouble(out var dx) ? dx : double.NaN;
        var q = b.TryGetDouble(out var dy) ? dy : double.NaN;
        return double.IsNaN(p) || double.IsNaN(q) ? string.CompareOrdinal(a.GetRawText(), b.GetRawText()) : p.CompareTo(q);
    }

    private static bool IsMultiple(JsonElement inst, JsonElement divisor)
    {
        if (inst.TryGetDecimal(out var x) && divisor.TryGetDecimal(out var y) && y != 0)
        {
            return x % y == 0;
        }
        return false;
    }

    private static bool SameValue(JsonElement a, JsonElement b) => string.Equals(ComparableText(a), ComparableText(b), StringComparison.Ordinal);

    /// <summary>JSON equality as the schema spec defines it (1.0 equals 1, member order irrelevant) via the canonical form.</summary>
    private static string ComparableText(JsonElement e)
    {
        try
        {
            return JsonCanonicalizer.CanonicalText(e);
        }
        catch (FormatException)
        {
            return "\u0000raw:" + e.GetRawText();
        }
    }

    private static long CodePoints(string s)
    {
        long n = 0;
        for (var i = 0; i < s.Length; i++)
        {
            if (char.IsHighSurrogate(s[i]) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
            {
                i++;
            }
            n++;
        }
        return n;
    }

    /// <summary>
    /// ECMA-262's "$" (as JSON Schema means it) matches only at the end of the input; .NET's also matches
    /// before a final newline, which would let "name\n" through a name pattern. Unescaped "$" outside a
    /// character class becomes "\z".
    /// </summary>
    internal static string EcmaAnchors(string pattern)
    {
        var sb = new System.Text.StringBuilder(pattern.Length + 4);
        var inClass = false;
        for (var i = 0; i < pattern.Length; i++)
        {
            var c = pattern[i];
            if (c == '\\' && i + 1 < pattern.Length)
            {
                sb.Append(c).Append(pattern[++i]);
                continue;
            }
            if (c == '[')
            {
                inClass = true;
            }
            else if (c == ']')
            {
                inClass = false;
            }
            else if (c == '$' && !inClass)
            {
                sb.Append("\\z");
                continue;
            }
            sb.Append(c);
        }
        return sb.ToString();
    }

    /// <summary>Refuses keywords this validator does not implement and compiles every pattern once.</summary>
    private void CheckSchema(JsonElement schema, string path)
    {
        if (schema.ValueKind is JsonValueKind.True or JsonValueKind.False)
        {
            return;
        }
        if (schema.ValueKind != JsonValueKind.Object)
        {
            throw new FormatException($"schema at {path} is not an object or boolean");
        }
        foreach (var k in schema.EnumerateObject())
        {
            var here = JsonPointer.Append(path, k.Name);
            if (!Annotations.Contains(k.Name) && !Assertions.Contains(k.Name))
            {
                throw new FormatException($"schema keyword {k.Name} at {path} is not supported by this validator");
            }
            switch (k.Name)
            {
                case "$defs" or "properties":
                    foreach (var sub in k.Value.EnumerateObject())
                    {
                        CheckSchema(sub.Value, JsonPointer.Append(here, sub.Name));
                    }
                    break;
                case "items" or "additionalProperties" or "not" or "if" or "then" or "else":
                    CheckSchema(k.Value, here);
                    break;
                case "allOf" or "anyOf" or "oneOf":
                    var i = 0;
                    foreach (var sub in k.Value.EnumerateArray())
                    {
                        CheckSchema(sub, JsonPointer.Append(here, i++));
                    }
                    break;
                case "$ref":
                    _ = Resolve(k.Value.GetString() ?? "");
                    break;
                case "type":
                    var names = k.Value.ValueKind == JsonValueKind.String
                        ? [k.Value.GetString()!]
                        : k.Value.EnumerateArray().Select(t => t.GetString() ?? "").ToArray();
                    if (names.Any(n => !Types.Contains(n)))
                    {
                        throw new FormatException($"unknown type at {here}");
                    }
                    break;
                case "pattern":
                    var pattern = k.Value.GetString()!;
                    if (!_patterns.ContainsKey(pattern))
                    {
                        _patterns.Add(pattern, new Regex(EcmaAnchors(pattern), RegexOptions.NonBacktracking | RegexOptions.CultureInvariant));
                    }
                    break;
                case "minLength" or "maxLength" or "minItems" or "maxItems" or "minProperties" or "maxProperties":
                    if (k.Value.ValueKind != JsonValueKind.Number || !k.Value.TryGetInt64(out var bound) || bound < 0)
                    {
                        throw new FormatException($"{here} must be a non-negative integer");
                    }
                    break;
                case "required":
                    if (k.Value.ValueKind != JsonValueKind.Array || k.Value.EnumerateArray().Any(n => n.ValueKind != JsonValueKind.String))
                    {
                        throw new FormatException($"{here} must be an array of strings");
                    }
                    break;
                case "enum":
                    if (k.Value.ValueKind != JsonValueKind.Array)
                    {
                        throw new FormatException($"{here} must be an array");
                    }
                    break;
                default:
                    break;
            }
        }
    }
}
