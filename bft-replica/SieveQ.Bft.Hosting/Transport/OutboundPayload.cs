using System.Buffers;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// An encoded message in a pooled buffer, shared by the send queues it was given to and returned to the
/// pool when the last of them has sealed it. Proposals of large batches are hundreds of kilobytes: as plain
/// arrays they land on the large-object heap and drive full collections, which stall the core loop.
/// Each <see cref="SendQueue.TryEnqueue"/> consumes one reference, whether it accepts or drops the payload.
/// </summary>
public sealed class OutboundPayload
{
    [ThreadStatic]
    private static ArrayBufferWriter<byte>? _scratch;
    private readonly byte[] _buffer;
    private int _references;

    private OutboundPayload(byte[] buffer, int length, int references)
    {
        _buffer = buffer;
        Length = length;
        _references = references;
    }

    public int Length { get; }

    public ReadOnlySpan<byte> Span => _buffer.AsSpan(0, Length);

    public static OutboundPayload Copy(ReadOnlySpan<byte> bytes, int references = 1)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(Math.Max(1, bytes.Length));
        bytes.CopyTo(buffer);
        return new OutboundPayload(buffer, bytes.Length, references);
    }

    /// <summary>Encodes a message (through a per-thread scratch buffer) into a pooled payload.</summary>
    public static OutboundPayload Encode(BftMessage message, int references = 1)
    {
        var scratch = _scratch ??= new ArrayBufferWriter<byte>(64 * 1024);
        scratch.ResetWrittenCount();
        MessageCodec.Encode(message, scratch);
        var payload = Copy(scratch.WrittenSpan, references);
        if (scratch.Capacity > 4 * 1024 * 1024)
        {
            _scratch = null;  // do not keep a huge state-transfer buffer per thread forever
        }
        return payload;
    }

    public void AddReferences(int count) => Interlocked.Add(ref _references, count);

    public void Release()
    {
        var left = Interlocked.Decrement(ref _references);
        if (left == 0)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
        }
        else if (left < 0)
        {
            throw new InvalidOperationException("payload released more often than referenced");
        }
    }
}
