using System.Threading.Channels;
using Google.Protobuf;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Protocol.V1;

namespace SieveQ.ReplicaSq;

/// <summary>
/// ACKRES on their way to the pre-SQ each ACKREQ came through: rendered with this replica's id and the
/// (replica, sender) MAC, then kept in a per-pre-SQ queue that drops its oldest entry when full (a
/// pre-SQ that is down or slow costs memory up to that bound, never the pump's time). A newer pre-SQ
/// subscription takes the queue over from an older one. An ACKRES lost here only delays the sender,
/// which repeats its ACKREQ through another pre-SQ.
/// </summary>
internal sealed class PreSqAckResponseQueues
{
    private readonly int _replica;
    private readonly Func<int, MacKeyRing?> _ringForSender;
    private readonly ReplicaSqMetrics _metrics;
    private readonly Dictionary<int, Channel<AckResponseFrame>> _queues = [];
    private readonly Lock _lock = new();
    private readonly Dictionary<int, AckResponseLease> _leases = [];

    public PreSqAckResponseQueues(int replica, IEnumerable<int> preSqs, int queueCapacity, Func<int, MacKeyRing?> ringForSender, ReplicaSqMetrics metrics)
    {
        _replica = replica;
        _ringForSender = ringForSender;
        _metrics = metrics;
        foreach (var p in preSqs)
        {
            _queues[p] = Channel.CreateBounded<AckResponseFrame>(new BoundedChannelOptions(queueCapacity)
            {
                FullMode = BoundedChannelFullMode.DropOldest,
                SingleReader = false,
                SingleWriter = true,
            }, _ => metrics.Drop(OutputDropReason.AckResponseQueueFull));
        }
    }

    public int LiveCount
    {
        get
        {
            lock (_lock)
            {
                return _leases.Count;
            }
        }
    }

    public bool Knows(int preSq) => _queues.ContainsKey(preSq);

    /// <summary>Pump thread: one ACKRES produced by agreed execution.</summary>
    public void Publish(OutboxAckResponse ack)
    {
        if (!_queues.TryGetValue(ack.ViaPreSq, out var queue) || _ringForSender(ack.Sender) is not { } ring)
        {
            _metrics.Drop(OutputDropReason.AckResponseUnroutable);
            return;
        }
        var frame = new AckResponseFrame
        {
            Sender = ack.Sender,
            Canonical = UnsafeByteOperations.UnsafeWrap(ReplicaOutputRenderer.Render(ack, _replica, ring)),
        };
        queue.Writer.TryWrite(frame);
        _metrics.AckResponseQueued();
    }

    /// <summary>Gives the pre-SQ's queue to a new subscription; the previous one ends.</summary>
    public AckResponseLease Attach(int preSq)
    {
        var lease = new AckResponseLease(this, preSq, _queues[preSq].Reader);
        AckResponseLease? older;
        lock (_lock)
        {
            _leases.TryGetValue(preSq, out older);
            _leases[preSq] = lease;
        }
        if (older is not null)
        {
            _metrics.SubscriptionReplaced(); // before the older lease's end is visible, as for receiver streams
            older.End();
        }
        _metrics.SubscriptionOpened(receiver: false);
        return lease;
    }

    internal void Detach(AckResponseLease lease)
    {
        lock (_lock)
        {
            if (_leases.TryGetValue(lease.PreSq, out var current) && ReferenceEquals(current, lease))
            {
                _leases.Remove(lease.PreSq);
            }
        }
    }

    public void EndAll()
    {
        List<AckResponseLease> all;
        lock (_lock)
        {
            all = [.. _leases.Values];
        }
        foreach (var l in all)
        {
            l.End();
        }
    }
}

/// <summary>One pre-SQ subscription's hold on its ACKRES queue; ended when replaced or on shutdown.</summary>
internal sealed class AckResponseLease : IDisposable
{
    private readonly PreSqAckResponseQueues _relay;
    private readonly CancellationTokenSource _ended = new();
    private int _isEnded;

    public AckResponseLease(PreSqAckResponseQueues relay, int preSq, ChannelReader<AckResponseFrame> reader)
    {
        _relay = relay;
        PreSq = preSq;
        Reader = reader;
        Ended = _ended.Token;
    }

    public int PreSq { get; }
    public ChannelReader<AckResponseFrame> Reader { get; }
    public CancellationToken Ended { get; }
    public bool IsEnded => Volatile.Read(ref _isEnded) == 1;

    public void End()
    {
        if (Interlocked.Exchange(ref _isEnded, 1) == 1)
        {
            return;
        }
        try
        {
            _ended.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // the subscription already finished
        }
    }

    public void Dispose()
    {
        _relay.Detach(this);
        End();
        _ended.Dispose();
    }
}
