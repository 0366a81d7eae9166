using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using SieveQ.Rules.Document;

namespace SieveQ.Rules.Formats;

/// <summary>
/// JSON payloads: declared fields addressed by JSON Pointer from the root object, each with a type and
/// range, enumeration, length or (linear-time) regex constraints. One forward pass with
/// <see cref="Utf8JsonReader"/> under a depth limit: subtrees no field lives in are skipped unread,
/// nothing is materialised. A member that appears twice on a declared path is refused, because two
/// parsers disagreeing on which copy counts is exactly how a filter gets bypassed.
/// </summary>
internal sealed class JsonFormat : CompiledFormat
{
    private readonly Node _root = new(null, "");
    private readonly Field[] _fields;
    private readonly int[] _fieldNodes;
    private readonly int _nodeCount;
    private readonly int _maxBytes;
    private readonly int _maxDepth;
    private readonly bool _denyOther;
    private readonly int _typeField;

    private sealed class Node(Field? field, string pointer)
    {
        public Field? Field { get; set; } = field;

        public string Pointer { get; } = pointer;

        public int Id { get; set; }

        public List<(byte[] Name, Node Child)> Children { get; } = [];
    }

    private sealed record Field(string Name, string Pointer, JsonFieldType Type, bool Required, ValueSet Integers, double Min, double Max,
        byte[][]? Enum, int MinLength, int MaxLength, Regex? Regex);

    public JsonFormat(FormatSpec spec) : base(spec.Name, spec.MessageType is not null)
    {
        _maxBytes = spec.MaxBytes ?? int.MaxValue;
        _maxDepth = spec.MaxDepth;
        _denyOther = spec.DenyOtherFields;
        var fields = new List<Field>();
        var names = new Dictionary<string, int>(StringComparer.Ordinal);
        var nodes = 1;
        var fieldNodes = new List<Node>();
        foreach (var f in spec.JsonFields)
        {
            if (!names.TryAdd(f.Name, fields.Count))
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, f.Path + "/name", $"duplicate field name \"{f.Name}\" in format \"{spec.Name}\"");
            }
            var field = Compile(f);
            var node = _root;
            var segments = f.Pointer[1..].Split('/');
            for (var s = 0; s < segments.Length; s++)
            {
                if (node.Field is { Type: not JsonFieldType.Object } parent)
                {
                    throw new RuleSetException(RuleSetErrorKind.Reference, f.Path + "/path", $"field \"{f.Name}\" lies under field \"{parent.Name}\", which is not an object");
                }
                var name = Encoding.UTF8.GetBytes(segments[s].Replace("~1", "/", StringComparison.Ordinal).Replace("~0", "~", StringComparison.Ordinal));
                var next = node.Children.FirstOrDefault(c => c.Name.AsSpan().SequenceEqual(name)).Child;
                if (next is null)
                {
                    next = new Node(null, "/" + string.Join('/', segments[..(s + 1)]));
                    node.Children.Add((name, next));
                    nodes++;
                }
                node = next;
            }
            if (node.Field is not null)
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, f.Path + "/path", $"two fields of format \"{spec.Name}\" have the path {f.Pointer}");
            }
            if (node.Children.Count > 0 && field.Type != JsonFieldType.Object)
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, f.Path + "/type", $"other fields lie under {f.Pointer}, so it must be an object");
            }
            node.Field = field;
            fields.Add(field);
            fieldNodes.Add(node);
        }
        _fields = [.. fields];
        _nodeCount = nodes;
        Number(_root, 0);
        _fieldNodes = [.. fieldNodes.Select(n => n.Id)];
        _typeField = -1;
        if (spec.MessageType is { } t)
        {
            if (!names.TryGetValue(t, out _typeField))
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, spec.Path + "/messageType", $"\"{t}\" is not a field of format \"{spec.Name}\"");
            }
            if (_fields[_typeField].Type is not (JsonFieldType.String or JsonFieldType.Integer))
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, spec.Path + "/messageType", $"the message type field \"{t}\" must be a string or an integer");
            }
            if (!_fields[_typeField].Required)
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, spec.Path + "/messageType", $"the message type field \"{t}\" must be required");
            }
        }
    }

    private static int Number(Node n, int next)
    {
        n.Id = next++;
        foreach (var (_, child) in n.Children)
        {
            next = Number(child, next);
        }
        return next;
    }

    private static Field Compile(JsonFieldSpec f)
    {
        Regex? regex = null;
        if (f.Regex is { } pattern)
        {
            regex = Matching.RegexFactory.Create(pattern, ignoreCase: false, f.Path + "/regex");
        }
        if (f.Numbers.Min is { } lo && f.Numbers.Max is { } hi && lo > hi)
        {
            throw new RuleSetException(RuleSetErrorKind.Reference, f.Path + "/min", "min is above max");
        }
        if (f.MinLength is { } a && f.MaxLength is { } b && a > b)
        {
            throw new RuleSetException(RuleSetErrorKind.Reference, f.Path + "/minLength", "minLength is above maxLength");
        }
        return new Field(f.Name, f.Pointer, f.Type, f.Required, ValueSet.From(f.Numbers),
            f.Numbers.Min ?? double.NegativeInfinity, f.Numbers.Max ?? double.PositiveInfinity,
            f.Enum?.Select(Encoding.UTF8.GetBytes).ToArray(), f.MinLength ?? 0, f.MaxLength ?? int.MaxValue, regex);
    }

    public override FormatResult Check(ReadOnlySpan<byte> payload)
    {
        if (payload.Length > _maxBytes)
        {
            return FormatResult.Fail($"{Name}: {payload.Length} bytes, at most {_maxBytes} allowed");
        }
        var seen = ArrayPool<bool>.Shared.Rent(_nodeCount);
        try
        {
            Array.Clear(seen, 0, _nodeCount);
            var type = MessageType.None;
            var problem = Walk(payload, seen, ref type);
            if (problem is not null)
            {
                return FormatResult.Fail($"{Name}: {problem}");
            }
            return FormatResult.Pass(type);
        }
        catch (JsonException e)
        {
            return FormatResult.Fail($"{Name}: not valid JSON (byte {e.BytePositionInLine ?? 0} of line {(e.LineNumber ?? 0) + 1})");
        }
        catch (InvalidOperationException)
        {
            return FormatResult.Fail($"{Name}: a string is not valid UTF-8");
        }
        finally
        {
            ArrayPool<bool>.Shared.Return(seen);
        }
    }

    private string? Walk(ReadOnlySpan<byte> payload, bool[] seen, ref MessageType type)
    {
        var reader = new Utf8JsonReader(payload, new JsonReaderOptions { MaxDepth = _maxDepth, CommentHandling = JsonCommentHandling.Disallow });
        if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
        {
            return "not a JSON object";
        }
        // Only objects on declared paths are entered, so the stack is at most as deep as the deepest path.
        var stack = ArrayPool<Node>.Shared.Rent(_maxDepth + 1);
        try
        {
            return WalkObjects(ref reader, seen, ref type, stack);
        }
        finally
        {
            Array.Clear(stack);
            ArrayPool<Node>.Shared.Return(stack);
        }
    }

    private string? WalkObjects(ref Utf8JsonReader reader, bool[] seen, ref MessageType type, Node[] stack)
    {
        var depth = 0;
        stack[depth++] = _root;
        while (reader.Read())
        {
            if (reader.TokenType == JsonTokenType.EndObject)
            {
                depth--;
                continue;
            }
            // Inside a tracked object the only other token is a member name.
            var parent = stack[depth - 1];
            Node? child = null;
            foreach (var (name, c) in parent.Children)
            {
                if (reader.ValueTextEquals(name))
                {
                    child = c;
                    break;
                }
            }
            if (child is null)
            {
                if (_denyOther)
                {
                    return $"member \"{reader.GetString()}\" at {(parent.Pointer.Length == 0 ? "the root" : parent.Pointer)} is not declared";
                }
                reader.Read();
                reader.Skip();
                continue;
            }
            if (seen[child.Id])
            {
                return $"member {child.Pointer} appears twice";
            }
            seen[child.Id] = true;
            reader.Read();
            if (child.Field is { } field)
            {
                var problem = CheckValue(ref reader, field, ref type);
                if (problem is not null)
                {
                    return problem;
                }
            }
            if (reader.TokenType == JsonTokenType.StartObject && child.Children.Count > 0)
            {
                stack[depth++] = child;
            }
            else
            {
                reader.Skip(); // a path prefix that is not an object: the fields under it are absent
            }
        }
        for (var i = 0; i < _fields.Length; i++)
        {
            if (_fields[i].Required && !seen[_fieldNodes[i]])
            {
                return $"required field {_fields[i].Name} ({_fields[i].Pointer}) missing";
            }
        }
        return null;
    }

    private string? CheckValue(ref Utf8JsonReader reader, Field f, ref MessageType type)
    {
        var isType = _typeField >= 0 && ReferenceEquals(_fields[_typeField], f);
        switch (f.Type)
        {
            case JsonFieldType.String:
                if (reader.TokenType != JsonTokenType.String)
                {
                    return $"field {f.Name} must be a string";
                }
                return CheckString(ref reader, f, isType, ref type);
            case JsonFieldType.Integer:
                if (reader.TokenType != JsonTokenType.Number || !reader.TryGetInt64(out var i))
                {
                    return $"field {f.Name} must be an integer";
                }
                if (!f.Integers.Contains(i))
                {
                    return $"field {f.Name} = {i} not allowed";
                }
                if (isType)
                {
                    type = MessageType.Of(i);
                }
                return null;
            case JsonFieldType.Number:
                if (reader.TokenType != JsonTokenType.Number || !reader.TryGetDouble(out var d) || !double.IsFinite(d))
                {
                    return $"field {f.Name} must be a number";
                }
                return d >= f.Min && d <= f.Max ? null
                    : $"field {f.Name} = {d.ToString("R", CultureInfo.InvariantCulture)} outside [{f.Min.ToString(CultureInfo.InvariantCulture)}, {f.Max.ToString(CultureInfo.InvariantCulture)}]";
            case JsonFieldType.Boolean:
                return reader.TokenType is JsonTokenType.True or JsonTokenType.False ? null : $"field {f.Name} must be a boolean";
            case JsonFieldType.Null:
                return reader.TokenType == JsonTokenType.Null ? null : $"field {f.Name} must be null";
            case JsonFieldType.Object:
                return reader.TokenType == JsonTokenType.StartObject ? null : $"field {f.Name} must be an object";
            default:
                return reader.TokenType == JsonTokenType.StartArray ? null : $"field {f.Name} must be an array";
        }
    }

    private static string? CheckString(ref Utf8JsonReader reader, Field f, bool isType, ref MessageType type)
    {
        var max = reader.HasValueSequence ? (int)reader.ValueSequence.Length : reader.ValueSpan.Length;
        var rented = ArrayPool<byte>.Shared.Rent(Math.Max(1, max));
        try
        {
            var length = reader.CopyString(rented);
            var value = rented.AsSpan(0, length);
            if (length < f.MinLength || length > f.MaxLength)
            {
                return $"field {f.Name} is {length} bytes long, allowed {f.MinLength}..{f.MaxLength}";
            }
            if (f.Enum is { } options)
            {
                var found = false;
                foreach (var o in options)
                {
                    if (value.SequenceEqual(o))
                    {
                        found = true;
                        break;
                    }
                }
                if (!found)
                {
                    return $"field {f.Name} has a value outside its enumeration";
                }
            }
            if (f.Regex is not null || isType)
            {
                var text = Encoding.UTF8.GetString(value);
                if (f.Regex is { } r && !r.IsMatch(text))
                {
                    return $"field {f.Name} does not match its pattern";
                }
                if (isType)
                {
                    type = MessageType.Of(text);
                }
            }
            return null;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }
}
