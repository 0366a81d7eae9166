using System.Buffers.Binary;
using SieveQ.Rules.Document;

namespace SieveQ.Rules.Formats;

/// <summary>
/// Fixed-offset fields of binary industrial protocols (Modbus/TCP, DNP3 headers, ...): each field an
/// unsigned 1, 2 or 4-byte integer at an offset, checked against its allowed values, optionally only
/// when an earlier field has given values (a register range that depends on the function code), or
/// required to equal the number of bytes that follow an offset (length prefixes). O(fields) per message.
/// </summary>
internal sealed class BinaryFormat : CompiledFormat
{
    private readonly Field[] _fields;
    private readonly int _minBytes;
    private readonly int _maxBytes;
    private readonly int _typeField;

    private sealed record Field(string Name, int Offset, int Length, bool BigEndian, bool Required, int When, ValueSet? WhenValues, ValueSet Allowed, int? LengthFrom);

    public BinaryFormat(FormatSpec spec) : base(spec.Name, spec.MessageType is not null)
    {
        _minBytes = spec.MinBytes ?? 0;
        _maxBytes = spec.MaxBytes ?? int.MaxValue;
        if (_minBytes > _maxBytes)
        {
            throw new RuleSetException(RuleSetErrorKind.Reference, JsonPath(spec.Path, "minBytes"), "minBytes is above maxBytes");
        }
        var fields = new List<Field>();
        var byName = new Dictionary<string, int>(StringComparer.Ordinal);
        for (var i = 0; i < spec.BinaryFields.Count; i++)
        {
            var f = spec.BinaryFields[i];
            if (byName.ContainsKey(f.Name))
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, JsonPath(f.Path, "name"), $"duplicate field name \"{f.Name}\" in format \"{spec.Name}\"");
            }
            if ((long)f.Offset + f.Length > _maxBytes)
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, JsonPath(f.Path, "offset"), $"field \"{f.Name}\" ends at byte {f.Offset + f.Length}, beyond the format's maxBytes {_maxBytes}");
            }
            var when = -1;
            if (f.WhenField is { } w)
            {
                if (!byName.TryGetValue(w, out when))
                {
                    throw new RuleSetException(RuleSetErrorKind.Reference, f.Path + "/when/field", $"\"{w}\" is not an earlier field of format \"{spec.Name}\"");
                }
            }
            byName.Add(f.Name, i);
            fields.Add(new Field(f.Name, f.Offset, f.Length, f.BigEndian, f.Required, when,
                f.WhenValues is { } wv ? ValueSet.From(new ValueConstraint(null, null, wv, null)) : null,
                ValueSet.From(f.Numbers), f.LengthFrom));
        }
        _fields = [.. fields];
        _typeField = -1;
        if (spec.MessageType is { } t && !byName.TryGetValue(t, out _typeField))
        {
            throw new RuleSetException(RuleSetErrorKind.Reference, JsonPath(spec.Path, "messageType"), $"\"{t}\" is not a field of format \"{spec.Name}\"");
        }
    }

    public override FormatResult Check(ReadOnlySpan<byte> payload)
    {
        if (payload.Length < _minBytes || payload.Length > _maxBytes)
        {
            return FormatResult.Fail(_maxBytes == int.MaxValue
                ? $"{Name}: {payload.Length} bytes, at least {_minBytes} needed"
                : $"{Name}: {payload.Length} bytes, allowed {_minBytes} to {_maxBytes}");
        }
        Span<long> values = _fields.Length <= 64 ? stackalloc long[_fields.Length] : new long[_fields.Length];
        Span<bool> present = _fields.Length <= 64 ? stackalloc bool[_fields.Length] : new bool[_fields.Length];
        for (var i = 0; i < _fields.Length; i++)
        {
            var f = _fields[i];
            if (f.When >= 0 && (!present[f.When] || !f.WhenValues!.Contains(values[f.When])))
            {
                continue;
            }
            if (f.Offset + f.Length > payload.Length)
            {
                if (f.Required)
                {
                    return FormatResult.Fail($"{Name}: field {f.Name} (bytes {f.Offset}..{f.Offset + f.Length - 1}) missing in a {payload.Length}-byte payload");
                }
                continue;
            }
            var raw = payload.Slice(f.Offset, f.Length);
            long v = f.Length switch
            {
                1 => raw[0],
                2 => f.BigEndian ? BinaryPrimitives.ReadUInt16BigEndian(raw) : BinaryPrimitives.ReadUInt16LittleEndian(raw),
                _ => f.BigEndian ? BinaryPrimitives.ReadUInt32BigEndian(raw) : BinaryPrimitives.ReadUInt32LittleEndian(raw),
            };
            if (!f.Allowed.Contains(v))
            {
                return FormatResult.Fail($"{Name}: field {f.Name} = {v} not allowed");
            }
            if (f.LengthFrom is { } from && v != payload.Length - from)
            {
                return FormatResult.Fail($"{Name}: field {f.Name} = {v}, but {Math.Max(0, payload.Length - from)} bytes follow byte {from}");
            }
            values[i] = v;
            present[i] = true;
        }
        if (_typeField >= 0 && !present[_typeField])
        {
            return FormatResult.Fail($"{Name}: no message type (field {_fields[_typeField].Name} absent)");
        }
        return FormatResult.Pass(_typeField >= 0 ? MessageType.Of(values[_typeField]) : MessageType.None);
    }

    private static string JsonPath(string path, string member) => path + "/" + member;
}
