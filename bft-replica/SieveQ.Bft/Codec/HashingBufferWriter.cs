using System.Buffers;
using System.Security.Cryptography;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Codec;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> that SHA-256-hashes what is written through a small pooled buffer
/// instead of keeping it, so a canonical layout can be hashed by the very code that encodes it.
/// </summary>
internal sealed class HashingBufferWriter : IBufferWriter<byte>, IDisposable
{
    private const int BufferBytes = 16 * 1024;
    private readonly IncrementalHash _sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(BufferBytes);
    private int _used;

    public void Advance(int count) => _used += count;

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        var need = Math.Max(sizeHint, 1);
        if (_buffer.Length - _used < need)
        {
            Drain();
            if (_buffer.Length < need)
            {
                ArrayPool<byte>.Shared.Return(_buffer);
                _buffer = ArrayPool<byte>.Shared.Rent(need);
            }
        }
        return _buffer.AsMemory(_used);
    }

    public Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;

    public Digest Finish()
    {
        Drain();
        Span<byte> h = stackalloc byte[Digest.Size];
        _sha.GetHashAndReset(h);
        return new Digest(h);
    }

    private void Drain()
    {
        _sha.AppendData(_buffer, 0, _used);
        _used = 0;
    }

    public void Dispose()
    {
        _sha.Dispose();
        ArrayPool<byte>.Shared.Return(_buffer);
    }
}
