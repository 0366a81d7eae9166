using System.Buffers;

namespace SieveQ.Bft.Hosting.Storage;

/// <summary>
/// A reusable, growable byte buffer whose written bytes stay editable (the record header is patched after
/// the body is encoded). Reused across appends so batch-sized records do not allocate on the large-object heap.
/// </summary>
public sealed class RecordBuffer : IBufferWriter<byte>
{
    private byte[] _buffer;
    private int _written;

    public RecordBuffer(int initialCapacity = 64 * 1024) => _buffer = new byte[initialCapacity];

    public int WrittenCount => _written;
    public Span<byte> Written => _buffer.AsSpan(0, _written);
    public ReadOnlyMemory<byte> WrittenMemory => _buffer.AsMemory(0, _written);

    public void Reset() => _written = 0;

    public void Advance(int count)
    {
        if (count < 0 || _written + count > _buffer.Length)
        {
            throw new ArgumentOutOfRangeException(nameof(count));
        }
        _written += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    private void Ensure(int sizeHint)
    {
        var need = _written + Math.Max(sizeHint, 1);
        if (need > _buffer.Length)
        {
            Array.Resize(ref _buffer, Math.Max(need, _buffer.Length * 2));
        }
    }
}
