using System.Buffers.Binary;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// Strict, bounds-checked little-endian reader. Every read checks the remaining length first and
/// every failure is a <see cref="MalformedEnvelopeException"/> naming the field, so decoders built
/// on it cannot throw anything else on bad input.
/// </summary>
public ref struct CanonicalReader
{
    private readonly ReadOnlySpan<byte> _data;
    private int _pos;

    public CanonicalReader(ReadOnlySpan<byte> data)
    {
        _data = data;
        _pos = 0;
    }

    public readonly int Position => _pos;

    public readonly int Remaining => _data.Length - _pos;

    public ReadOnlySpan<byte> Take(int count, string field)
    {
        if (count < 0 || count > Remaining)
        {
            throw new MalformedEnvelopeException($"{field}: needs {count} bytes, {Remaining} left");
        }
        var s = _data.Slice(_pos, count);
        _pos += count;
        return s;
    }

    public byte U8(string field) => Take(1, field)[0];

    public bool Bool(string field) => U8(field) switch
    {
        0 => false,
        1 => true,
        var b => throw new MalformedEnvelopeException($"{field}: boolean byte {b}"),
    };

    public ushort U16(string field) => BinaryPrimitives.ReadUInt16LittleEndian(Take(2, field));

    public uint U32(string field) => BinaryPrimitives.ReadUInt32LittleEndian(Take(4, field));

    public int Id(string field)
    {
        var v = U32(field);
        return v <= int.MaxValue ? (int)v : throw new MalformedEnvelopeException($"{field}: identifier {v} out of range");
    }

    public long Seq(string field)
    {
        var v = BinaryPrimitives.ReadUInt64LittleEndian(Take(8, field));
        return v <= long.MaxValue ? (long)v : throw new MalformedEnvelopeException($"{field}: value {v} out of range");
    }

    public long I64(string field) => BinaryPrimitives.ReadInt64LittleEndian(Take(8, field));

    public int Count(int max, string field)
    {
        var v = U32(field);
        return v <= (uint)max ? (int)v : throw new MalformedEnvelopeException($"{field}: count {v} above limit {max}");
    }

    /// <summary>u32 length-prefixed bytes, as a slice of the input (no copy).</summary>
    public ReadOnlySpan<byte> Bytes(int max, string field) => Take(Count(max, field), field);

    public void Kind(StructureKind expected)
    {
        var k = U8("kind");
        if (k != (byte)expected)
        {
            throw new MalformedEnvelopeException($"{expected}: kind byte 0x{k:x2}, expected 0x{(byte)expected:x2}");
        }
    }

    public readonly void End(string what)
    {
        if (Remaining != 0)
        {
            throw new MalformedEnvelopeException($"{what}: {Remaining} trailing bytes");
        }
    }
}
