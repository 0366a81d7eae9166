using System.Buffers;
using System.Buffers.Binary;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// Little-endian writer over a pooled buffer. Every structure's canonical layout is produced by
/// exactly one encoder using this writer, so the bytes that are signed are the bytes on the wire.
/// Dispose returns the buffer to the pool.
/// </summary>
public sealed class CanonicalWriter : IDisposable
{
    private byte[] _buffer;
    private int _length;

    public CanonicalWriter(int initialCapacity = 256)
    {
        _buffer = ArrayPool<byte>.Shared.Rent(Math.Max(16, initialCapacity));
    }

    public int Length => _length;

    public ReadOnlySpan<byte> WrittenSpan => _buffer.AsSpan(0, _length);

    public byte[] ToArray() => WrittenSpan.ToArray();

    /// <summary>Empties the writer and keeps its buffer for reuse.</summary>
    public void Reset() => _length = 0;

    public void U8(byte value) => Reserve(1)[0] = value;

    public void Bool(bool value) => U8(value ? (byte)1 : (byte)0);

    public void U16(ushort value) => BinaryPrimitives.WriteUInt16LittleEndian(Reserve(2), value);

    public void U32(uint value) => BinaryPrimitives.WriteUInt32LittleEndian(Reserve(4), value);

    /// <summary>Identifiers and counts are non-negative ints carried as u32.</summary>
    public void Id(int value)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(value);
        U32((uint)value);
    }

    public void U64(ulong value) => BinaryPrimitives.WriteUInt64LittleEndian(Reserve(8), value);

    public void I64(long value) => BinaryPrimitives.WriteInt64LittleEndian(Reserve(8), value);

    /// <summary>Sequence numbers and times are non-negative longs carried as u64.</summary>
    public void Seq(long value)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(value);
        U64((ulong)value);
    }

    public void Raw(ReadOnlySpan<byte> bytes) => bytes.CopyTo(Reserve(bytes.Length));

    /// <summary>u32 length followed by the bytes.</summary>
    public void Bytes(ReadOnlySpan<byte> bytes)
    {
        U32((uint)bytes.Length);
        Raw(bytes);
    }

    /// <summary>Reserves a fixed-size slot to be filled later (a length or a MAC computed over the prefix).</summary>
    public int Skip(int count)
    {
        var at = _length;
        Reserve(count).Clear();
        return at;
    }

    public Span<byte> Slot(int offset, int count) => _buffer.AsSpan(offset, count);

    public void PatchU32(int offset, uint value) => BinaryPrimitives.WriteUInt32LittleEndian(_buffer.AsSpan(offset, 4), value);

    public Span<byte> Reserve(int count)
    {
        if (_length + count > _buffer.Length)
        {
            var bigger = ArrayPool<byte>.Shared.Rent(Math.Max(_buffer.Length * 2, _length + count));
            _buffer.AsSpan(0, _length).CopyTo(bigger);
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = bigger;
        }
        var span = _buffer.AsSpan(_length, count);
        _length += count;
        return span;
    }

    public void Dispose()
    {
        var b = _buffer;
        _buffer = [];
        _length = 0;
        if (b.Length > 0)
        {
            ArrayPool<byte>.Shared.Return(b);
        }
    }
}
