using System.Threading.Channels;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// Encoded messages waiting for one peer, bounded by count and bytes. It outlives individual connections
/// so a reconnect resumes sending; when the peer is slow or gone, new messages are dropped and counted
/// instead of growing memory (the protocol recovers lost messages through its time-outs and state transfer).
/// </summary>
public sealed class SendQueue(int maxFrames, long maxBytes)
{
    // Asynchronous continuations on purpose. Letting the producer (the core loop) run the pump inline on
    // every enqueue halved throughput (12k vs 23k req/s at 1 KB: no coalescing, one syscall per message);
    // queueing a whole drain and then running the pumps inline ("deferred kick") was no better either
    // (p50 4.7 vs 3.1 ms at 1,000 req/s): the core loop is better off ordering while a pool thread sends.
    private readonly Channel<OutboundPayload> _channel = Channel.CreateUnbounded<OutboundPayload>(
        new UnboundedChannelOptions { SingleReader = true, AllowSynchronousContinuations = false });
    private int _count;
    private long _bytes;

    public int Count => Volatile.Read(ref _count);
    public long Bytes => Volatile.Read(ref _bytes);
    public long Dropped { get; private set; }

    /// <summary>Queues an encoded message, consuming one of its references (released here if the queue is full).</summary>
    public bool TryEnqueue(OutboundPayload payload)
    {
        if (Interlocked.Increment(ref _count) > maxFrames)
        {
            Interlocked.Decrement(ref _count);
            return Reject(payload);
        }
        if (Interlocked.Add(ref _bytes, payload.Length) > maxBytes)
        {
            Interlocked.Add(ref _bytes, -payload.Length);
            Interlocked.Decrement(ref _count);
            return Reject(payload);
        }
        return _channel.Writer.TryWrite(payload) || Reject(payload);
    }

    private bool Reject(OutboundPayload payload)
    {
        payload.Release();
        Dropped++;
        TransportCounters.Drop(DropReason.SendQueueFull);
        return false;
    }

    internal bool TryDequeue(out OutboundPayload payload)
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
