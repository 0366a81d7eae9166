using System.Collections.Concurrent;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>What drains a <see cref="SendQueue"/>: the link currently connected to its peer.</summary>
public interface ISendDrain
{
    /// <summary>Sends what is queued, on the caller's thread when that is cheap; never blocks.</summary>
    void Kick();

    /// <summary>The queue was completed: the drain ends its session.</summary>
    void QueueCompleted();
}

/// <summary>
/// Encoded messages waiting for one peer, bounded by count and bytes. It outlives individual connections
/// so a reconnect resumes sending; when the peer is slow or gone, new messages are dropped and counted
/// instead of growing memory (the protocol recovers lost messages through its time-outs and state transfer).
/// Producers that queue several messages at once use <see cref="TryEnqueueDeferred"/> and then one
/// <see cref="Kick"/>, so the batch shares a frame, a MAC and a send call; see <see cref="AuthenticatedLink"/>
/// for when the kick sends on the producer's thread.
/// </summary>
public sealed class SendQueue(int maxFrames, long maxBytes)
{
    private readonly ConcurrentQueue<OutboundPayload> _items = new();
    private ISendDrain? _drain;
    private int _count;
    private long _bytes;
    private volatile bool _completed;

    public int Count => Volatile.Read(ref _count);
    public long Bytes => Volatile.Read(ref _bytes);
    public long Dropped { get; private set; }

    /// <summary>Queues an encoded message and kicks the drain; consumes one of the payload's references.</summary>
    public bool TryEnqueue(OutboundPayload payload)
    {
        var queued = TryEnqueueDeferred(payload);
        Kick();
        return queued;
    }

    /// <summary>Queues without kicking; the caller kicks once after its last message.</summary>
    public bool TryEnqueueDeferred(OutboundPayload payload)
    {
        if (_completed)
        {
            return Reject(payload);
        }
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
        _items.Enqueue(payload);
        return true;
    }

    /// <summary>Asks the attached link, if any, to send what is queued.</summary>
    public void Kick() => Volatile.Read(ref _drain)?.Kick();

    private bool Reject(OutboundPayload payload)
    {
        payload.Release();
        Dropped++;
        TransportCounters.Drop(DropReason.SendQueueFull);
        return false;
    }

    internal bool IsEmpty => _items.IsEmpty;

    internal bool TryDequeue(out OutboundPayload payload)
    {
        if (!_items.TryDequeue(out payload!))
        {
            return false;
        }
        Interlocked.Decrement(ref _count);
        Interlocked.Add(ref _bytes, -payload.Length);
        return true;
    }

    internal void Attach(ISendDrain drain)
    {
        Interlocked.Exchange(ref _drain, drain);  // full fence: pairs with Complete, so one of them sees the other
        if (_completed)
        {
            drain.QueueCompleted();
        }
    }

    internal void Detach(ISendDrain drain) => Interlocked.CompareExchange(ref _drain, null, drain);

    /// <summary>Ends the queue: later messages are dropped, and the attached link ends its session.</summary>
    public void Complete()
    {
        _completed = true;
        Interlocked.MemoryBarrier();
        Volatile.Read(ref _drain)?.QueueCompleted();
    }
}
