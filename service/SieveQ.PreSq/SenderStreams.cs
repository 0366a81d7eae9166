using System.Collections.Concurrent;
using Google.Protobuf;
using SieveQ.Protocol.V1;

namespace SieveQ.PreSq;

/// <summary>
/// Which open Exchange stream the replicas' ACKRES for a sender go to. A stream is bound to a sender by a
/// frame of that sender passing every check on it; the latest such stream wins, so a sender that
/// reconnects takes its ACKRES along. One stream may carry several senders (an agent hosts many).
/// Bound by the event loop, read by the relay's tasks.
/// </summary>
internal sealed class SenderStreams
{
    private readonly ConcurrentDictionary<int, SenderStream> _bySender = new();
    private readonly PreSqMetrics _metrics;
    private int _open;

    public SenderStreams(PreSqMetrics metrics)
    {
        _metrics = metrics;
    }

    public int OpenStreams => Volatile.Read(ref _open);

    public int BoundSenders => _bySender.Count;

    public SenderStream Open(int queueEvents, TimeSpan unboundTimeout)
    {
        Interlocked.Increment(ref _open);
        return new SenderStream(queueEvents, unboundTimeout);
    }

    public void Close(SenderStream stream)
    {
        // Marked closed first, so a Bind racing with this either sees it or is undone below.
        stream.Complete();
        foreach (var entry in _bySender)
        {
            if (entry.Value == stream)
            {
                // Removes only if still this stream: a newer stream bound meanwhile keeps the sender.
                _bySender.TryRemove(entry);
            }
        }
        stream.Dispose();
        Interlocked.Decrement(ref _open);
    }

    public void Bind(int sender, SenderStream stream)
    {
        stream.MarkBound();
        if (stream.IsClosed || (_bySender.TryGetValue(sender, out var current) && current == stream))
        {
            return;
        }
        _bySender[sender] = stream;
        _metrics.Binding();
        if (stream.IsClosed)
        {
            // Close ran between the check and the store: do not leave a dead stream bound.
            _bySender.TryRemove(new KeyValuePair<int, SenderStream>(sender, stream));
        }
    }

    public void Deliver(int sender, ByteString ackResponse)
    {
        if (!_bySender.TryGetValue(sender, out var stream))
        {
            _metrics.AckResponseUnbound();
            return;
        }
        if (stream.TryEnqueue(new PreSqEvent { AckResponse = ackResponse }))
        {
            _metrics.AckResponseSubscribered();
        }
        else
        {
            _metrics.AckResponseQueueFull();
        }
    }
}
