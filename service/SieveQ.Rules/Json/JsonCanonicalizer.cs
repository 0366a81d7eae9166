using System.Buffers;
using System.Text;
using System.Text.Json;

namespace SieveQ.Rules.Json;

/// <summary>
/// RFC 8785 (JSON Canonicalization Scheme): the byte form a rule-set signature covers. Members sorted
/// by their names' UTF-16 code units, no insignificant whitespace, numbers as ECMAScript prints them,
/// strings with the minimal escaping of ECMAScript's JSON.stringify, UTF-8 output. Inputs that I-JSON
/// (RFC 7493) forbids are refused with a <see cref="FormatException"/> naming the JSON path: duplicate
/// member names, lone surrogates, numbers outside the double range.
/// </summary>
public static class JsonCanonicalizer
{
    public const int MaxDepth = 64;

    public static byte[] Canonicalize(ReadOnlySpan<byte> json)
    {
        JsonDocument doc;
        try
        {
            var reader = new Utf8JsonReader(json, new JsonReaderOptions { MaxDepth = MaxDepth });
            doc = JsonDocument.ParseValue(ref reader);
            if (reader.BytesConsumed != json.Length && !IsWhitespace(json[(int)reader.BytesConsumed..]))
            {
                throw new FormatException("trailing content after the JSON value");
            }
        }
        catch (JsonException e)
        {
            throw new FormatException($"not JSON: {e.Message}", e);
        }
        using (doc)
        {
            return Canonicalize(doc.RootElement);
        }
    }

    public static byte[] Canonicalize(JsonElement element)
    {
        var buffer = new ArrayBufferWriter<byte>(1024);
        Write(element, buffer, "", 0);
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>The canonical text of one value, for equality tests (uniqueItems, const, enum).</summary>
    public static string CanonicalText(JsonElement element) => Encoding.UTF8.GetString(Canonicalize(element));

    private static bool IsWhitespace(ReadOnlySpan<byte> rest)
    {
        foreach (var b in rest)
        {
            if (b is not ((byte)' ' or (byte)'\t' or (byte)'\r' or (byte)'\n'))
            {
                return false;
            }
        }
        return true;
    }

    private static void Write(JsonElement e, ArrayBufferWriter<byte> o, string path, int depth)
    {
        if (depth > MaxDepth)
        {
            throw new FormatException($"{path}: nested deeper than {MaxDepth}");
        }
        switch (e.ValueKind)
        {
            case JsonValueKind.Object:
                WriteObject(e, o, path, depth);
                break;
            case JsonValueKind.Array:
                Raw(o, "["u8);
                var i = 0;
                foreach (var item in e.EnumerateArray())
                {
                    if (i > 0)
                    {
                        Raw(o, ","u8);
                    }
                    Write(item, o, JsonPointer.Append(path, i), depth + 1);
                    i++;
                }
                Raw(o, "]"u8);
                break;
            case JsonValueKind.String:
                WriteString(StringOf(e, path), o);
                break;
            case JsonValueKind.Number:
                Ascii(o, EcmaScriptNumber.Format(NumberOf(e, path)));
                break;
            case JsonValueKind.True:
                Raw(o, "true"u8);
                break;
            case JsonValueKind.False:
                Raw(o, "false"u8);
                break;
            default:
                Raw(o, "null"u8);
                break;
        }
    }

    private static void WriteObject(JsonElement e, ArrayBufferWriter<byte> o, string path, int depth)
    {
        var members = new List<(string Name, JsonElement Value)>();
        foreach (var p in e.EnumerateObject())
        {
            members.Add((NameOf(p, path), p.Value));
        }
        // string.CompareOrdinal compares UTF-16 code units, exactly the order RFC 8785 section 3.2.3 asks for.
        members.Sort((a, b) => string.CompareOrdinal(a.Name, b.Name));
        for (var i = 1; i < members.Count; i++)
        {
            if (string.Equals(members[i - 1].Name, members[i].Name, StringComparison.Ordinal))
            {
                throw new FormatException($"{JsonPointer.Append(path, members[i].Name)}: duplicate member name");
            }
        }
        Raw(o, "{"u8);
        for (var i = 0; i < members.Count; i++)
        {
            if (i > 0)
            {
                Raw(o, ","u8);
            }
            WriteString(members[i].Name, o);
            Raw(o, ":"u8);
            Write(members[i].Value, o, JsonPointer.Append(path, members[i].Name), depth + 1);
        }
        Raw(o, "}"u8);
    }

    private static string NameOf(JsonProperty p, string path)
    {
        try
        {
            return CheckScalars(p.Name, path);
        }
        catch (InvalidOperationException ex)
        {
            throw new FormatException($"{path}: member name is not valid UTF-16 (a lone surrogate)", ex);
        }
    }

    private static string StringOf(JsonElement e, string path)
    {
        try
        {
            return CheckScalars(e.GetString()!, path);
        }
        catch (InvalidOperationException ex)
        {
            throw new FormatException($"{path}: string is not valid UTF-16 (a lone surrogate)", ex);
        }
    }

    internal static double NumberOf(JsonElement e, string path)
    {
        if (!e.TryGetDouble(out var d) || !double.IsFinite(d))
        {
            throw new FormatException($"{path}: number {e.GetRawText()} is outside the IEEE-754 double range");
        }
        return d;
    }

    private static string CheckScalars(string s, string path)
    {
        for (var i = 0; i < s.Length; i++)
        {
            if (char.IsHighSurrogate(s[i]) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
            {
                i++;
            }
            else if (char.IsSurrogate(s[i]))
            {
                throw new FormatException($"{path}: lone surrogate U+{(int)s[i]:X4}");
            }
        }
        return s;
    }

    private static void WriteString(string s, ArrayBufferWriter<byte> o)
    {
        var sb = new StringBuilder(s.Length + 2);
        sb.Append('"');
        foreach (var c in s)
        {
            switch (c)
            {
                case '"':
                    sb.Append("\\\"");
                    break;
                case '\\':
                    sb.Append("\\\\");
                    break;
                case '\b':
                    sb.Append("\\b");
                    break;
                case '\t':
                    sb.Append("\\t");
                    break;
                case '\n':
                    sb.Append("\\n");
                    break;
                case '\f':
                    sb.Append("\\f");
                    break;
                case '\r':
                    sb.Append("\\r");
                    break;
                case < ' ':
                    sb.Append("\\u00").Append(HexDigit(c >> 4)).Append(HexDigit(c & 0xF));
                    break;
                default:
                    sb.Append(c);
                    break;
            }
        }
        sb.Append('"');
        var text = sb.ToString();
        var span = o.GetSpan(Encoding.UTF8.GetMaxByteCount(text.Length));
        o.Advance(Encoding.UTF8.GetBytes(text, span));
    }

    private static char HexDigit(int v) => (char)(v < 10 ? '0' + v : 'a' + v - 10);

    private static void Raw(ArrayBufferWriter<byte> o, ReadOnlySpan<byte> bytes) => o.Write(bytes);

    private static void Ascii(ArrayBufferWriter<byte> o, string s)
    {
        var span = o.GetSpan(s.Length);
        for (var i = 0; i < s.Length; i++)
        {
            span[i] = (byte)s[i];
        }
        o.Advance(s.Length);
    }
}
