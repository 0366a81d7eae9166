using System.Threading.Channels;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// Encoded messages waiting for one peer, bounded by count and bytes. It outlives individual connections
/// so a reconnect resumes sending; when the peer is slow or gone, new messages are dropped and counted
/// instead of growing memory (the protocol recovers lost messages through its time-outs and state transfer).
/// </summary>
public sealed class SendQueue(int maxFrames, long maxBytes)
{
    private readonly Channel<byte[]> _channel = Channel.CreateUnbounded<byte[]>(new UnboundedChannelOptions { SingleReader = true });
    private int _count;
    private long _bytes;

    public int Count => Volatile.Read(ref _count);
    public long Bytes => Volatile.Read(ref _bytes);
    public long Dropped { get; private set; }

    /// <summary>Queues an encoded message; the array must not be modified afterwards (it may be shared by several queues).</summary>
    public bool TryEnqueue(byte[] payload)
    {
        if (Interlocked.Increment(ref _count) > maxFrames)
        {
            Interlocked.Decrement(ref _count);
            return Reject();
        }
        if (Interlocked.Add(ref _bytes, payload.Length) > maxBytes)
        {
            Interlocked.Add(ref _bytes, -payload.Length);
            Interlocked.Decrement(ref _count);
            return Reject();
        }
        return _channel.Writer.TryWrite(payload) || Reject();
    }

    private bool Reject()
    {
        Dropped++;
        TransportCounters.Drop(DropReason.SendQueueFull);
        return false;
    }

    internal bool TryDequeue(out byte[] payload)
    {
        if (!_channel.Reader.TryRead(out payload!))
        {
            return false;
        }
        Interlocked.Decrement(ref _count);
        Interlocked.Add(ref _bytes, -payload.Length);
        return true;
    }

    internal ValueTask<bool> WaitToReadAsync(CancellationToken ct) => _channel.Reader.WaitToReadAsync(ct);

    public void Complete() => _channel.Writer.TryComplete();
}
