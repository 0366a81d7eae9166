using System.Buffers.Binary;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Codec;

/// <summary>Bounds-checked little-endian reader; every read checks the remaining length first.</summary>
internal ref struct WireReader
{
    private readonly ReadOnlySpan<byte> _data;
    private int _pos;

    public WireReader(ReadOnlySpan<byte> data)
    {
        _data = data;
        _pos = 0;
    }

    public readonly int Remaining => _data.Length - _pos;

    public readonly int Position => _pos;

    /// <summary>The bytes read since <paramref name="start"/> (a <see cref="Position"/> taken earlier).</summary>
    public readonly ReadOnlySpan<byte> ReadSince(int start) => _data[start.._pos];

    private ReadOnlySpan<byte> Take(int n, string field)
    {
        if (n < 0 || n > Remaining)
        {
            throw new MalformedMessageException($"{field}: needs {n} bytes, {Remaining} left");
        }
        var s = _data.Slice(_pos, n);
        _pos += n;
        return s;
    }

    public byte U8(string field) => Take(1, field)[0];
    public bool Bool(string field) => U8(field) switch
    {
        0 => false,
        1 => true,
        var b => throw new MalformedMessageException($"{field}: boolean byte {b}"),
    };
    public int I32(string field) => BinaryPrimitives.ReadInt32LittleEndian(Take(4, field));
    public long I64(string field) => BinaryPrimitives.ReadInt64LittleEndian(Take(8, field));

    public int NonNegative(string field)
    {
        var v = I32(field);
        return v >= 0 ? v : throw new MalformedMessageException($"{field}: negative value {v}");
    }

    public long NonNegative64(string field)
    {
        var v = I64(field);
        return v >= 0 ? v : throw new MalformedMessageException($"{field}: negative value {v}");
    }

    public int Count(int max, string field)
    {
        var n = NonNegative(field);
        return n <= max ? n : throw new MalformedMessageException($"{field}: count {n} above limit {max}");
    }

    public Digest Digest(string field) => new(Take(Protocol.Digest.Size, field));

    public byte[] Bytes(int max, string field) => Span(max, field).ToArray();

    /// <summary>Length-prefixed bytes as a view of the frame, valid only as long as the frame.</summary>
    public ReadOnlySpan<byte> Span(int max, string field)
    {
        var n = Count(max, field);
        return Take(n, field);
    }

    public readonly void End(string what)
    {
        if (Remaining != 0)
        {
            throw new MalformedMessageException($"{what}: {Remaining} trailing bytes");
        }
    }
}
