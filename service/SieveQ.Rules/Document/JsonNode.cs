using System.Text.Json;
using SieveQ.Rules.Json;

namespace SieveQ.Rules.Document;

/// <summary>
/// A schema-checked JSON element with its pointer. The accessors trust the schema for shapes but still
/// fail with a <see cref="RuleSetException"/> (never anything else) if the two ever disagree.
/// </summary>
internal readonly struct JsonNode(JsonElement element, string path)
{
    public JsonElement Element => element;

    public string Path => path;

    public bool Has(string member) => element.ValueKind == JsonValueKind.Object && element.TryGetProperty(member, out _);

    public JsonNode this[string member] => element.ValueKind == JsonValueKind.Object && element.TryGetProperty(member, out var v)
        ? new JsonNode(v, JsonPointer.Append(path, member))
        : throw Error($"missing member \"{member}\"");

    public JsonNode? Optional(string member) => Has(member) ? this[member] : null;

    public IEnumerable<JsonNode> Items()
    {
        if (element.ValueKind != JsonValueKind.Array)
        {
            throw Error("expected an array");
        }
        var i = 0;
        foreach (var item in element.EnumerateArray())
        {
            yield return new JsonNode(item, JsonPointer.Append(path, i++));
        }
    }

    public string String()
    {
        if (element.ValueKind != JsonValueKind.String)
        {
            throw Error("expected a string");
        }
        try
        {
            return element.GetString()!;
        }
        catch (InvalidOperationException e)
        {
            throw new RuleSetException(RuleSetErrorKind.Syntax, path, "string is not valid UTF-16", e);
        }
    }

    public long Long()
    {
        if (element.ValueKind == JsonValueKind.Number && element.TryGetInt64(out var v))
        {
            return v;
        }
        if (element.ValueKind == JsonValueKind.Number && element.TryGetDecimal(out var d) && d == decimal.Truncate(d) && d >= long.MinValue && d <= long.MaxValue)
        {
            return (long)d; // 1.0 is an integer to JSON Schema
        }
        throw Error("expected an integer");
    }

    public int Int()
    {
        var v = Long();
        return v is >= int.MinValue and <= int.MaxValue ? (int)v : throw Error("integer out of range");
    }

    public double Double()
    {
        if (element.ValueKind == JsonValueKind.Number && element.TryGetDouble(out var d) && double.IsFinite(d))
        {
            return d;
        }
        throw Error("expected a number");
    }

    public bool Bool() => element.ValueKind switch
    {
        JsonValueKind.True => true,
        JsonValueKind.False => false,
        _ => throw Error("expected a boolean"),
    };

    public string? OptString(string member) => Optional(member)?.String();

    public int? OptInt(string member) => Optional(member)?.Int();

    public long? OptLong(string member) => Optional(member)?.Long();

    public bool OptBool(string member, bool fallback) => Optional(member)?.Bool() ?? fallback;

    public List<string>? OptStrings(string member) => Optional(member)?.Items().Select(n => n.String()).ToList();

    public List<int>? OptInts(string member) => Optional(member)?.Items().Select(n => n.Int()).ToList();

    public RuleSetException Error(string message) => new(RuleSetErrorKind.Schema, path, message);
}
