using SieveQ.Transport;
using Microsoft.Extensions.Logging;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// The live receiver subscriptions of this replica, one per receiver (a newer one ends the older), and
/// what goes into them: agreed batches as they are executed (from the pump) and re-sent unacknowledged
/// items (at subscription start, and periodically for items older than the retransmission interval,
/// so a receiver that missed a batch catches up; the post-SQ ignores what it already has).
/// <para>
/// A new subscription is registered before its pending items are read, so an item executed meanwhile
/// is either in that read or in a live batch published after the registration, possibly in both,
/// never in neither: the sieve publishes its read model before an execution's outputs leave it.
/// </para>
/// <para>
/// Pending items are read from the sieve's published <see cref="SieveReadModel"/>, never from the sieve
/// itself, so a re-send does not wait for execution nor execution for a re-send.
/// </para>
/// </summary>
internal sealed partial class ReceiverStreams
{
    private readonly Lock _lock = new();
    private readonly Dictionary<int, ReceiverStream> _live = [];
    private readonly Dictionary<int, PendingAges> _ages = [];
    private readonly Func<SieveReadModel> _readModel;
    private readonly ExecutionOutputQueue _outputs;
    private readonly OutputFrames _frames;
    private readonly Func<int, MacKeyRing?> _ringFor;
    private readonly ReplicaSqHostOptions _options;
    private readonly ReplicaSqMetrics _metrics;
    private readonly ILogger _log;
    private long _seenResync;

    public ReceiverStreams(Func<SieveReadModel> readModel, ExecutionOutputQueue outputs, OutputFrames frames, Func<int, MacKeyRing?> ringFor, ReplicaSqHostOptions options,
        ReplicaSqMetrics metrics, ILogger log)
    {
        _readModel = readModel;
        _outputs = outputs;
        _frames = frames;
        _ringFor = ringFor;
        _options = options;
        _metrics = metrics;
        _log = log;
    }

    public int LiveCount
    {
        get
        {
            lock (_lock)
            {
                return _live.Count;
            }
        }
    }

    /// <summary>Registers a subscription (ending an older one for the same receiver) and queues every unacknowledged item on it.</summary>
    public ReceiverStream Open(int receiver)
    {
        var stream = new ReceiverStream(receiver, _options.SubscriptionQueueFrames, _options.SubscriptionQueueBytes);
        ReceiverStream? older;
        lock (_lock)
        {
            _live.TryGetValue(receiver, out older);
            _live[receiver] = stream;
        }
        if (older is not null)
        {
            // Counted before the end is visible to the older subscriber, so whoever sees it end sees the count.
            _metrics.SubscriptionReplaced();
            older.End(StreamEnd.Replaced);
        }
        _metrics.SubscriptionOpened(receiver: true);
        Resend(stream, onlyOld: false, MonotonicClock.Ms);
        return stream;
    }

    public void Close(ReceiverStream stream, StreamEnd reason)
    {
        lock (_lock)
        {
            if (_live.TryGetValue(stream.Receiver, out var current) && ReferenceEquals(current, stream))
            {
                _live.Remove(stream.Receiver);
            }
        }
        stream.End(reason);
    }

    public void CloseAll()
    {
        List<ReceiverStream> all;
        lock (_lock)
        {
            all = [.. _live.Values];
            _live.Clear();
        }
        foreach (var s in all)
        {
            s.End(StreamEnd.Shutdown);
        }
    }

    /// <summary>A batch just executed (pump thread): to the receiver's subscription, if it has one.</summary>
    public void Publish(OutboxBatch batch)
    {
        ReceiverStream? stream;
        lock (_lock)
        {
            AgesOf(batch.Receiver).Observe(batch);
            _live.TryGetValue(batch.Receiver, out stream);
        }
        if (stream is null)
        {
            // Nobody listening: the items stay queued and go out when the receiver subscribes.
            return;
        }
        if (_ringFor(batch.Receiver) is not { } ring)
        {
            _metrics.Drop(OutputDropReason.UnknownReceiver);
            return;
        }
        foreach (var frame in _frames.Live(batch, ring))
        {
            if (!EnqueueLive(stream, frame, batch.Items.Count))
            {
                return;
            }
        }
    }

    /// <summary>Periodic catch-up: re-sends what is older than the interval (everything after a state jump or lost outputs).</summary>
    public void RetransmitDue()
    {
        var now = MonotonicClock.Ms;
        var generation = ResyncGeneration;
        var everything = generation != Interlocked.Exchange(ref _seenResync, generation);
        List<ReceiverStream> streams;
        lock (_lock)
        {
            foreach (var a in _ages.Values)
            {
                a.Tick(now);
            }
            streams = [.. _live.Values];
        }
        var interval = (long)_options.RetransmitAfter.TotalMilliseconds;
        foreach (var s in streams)
        {
            if (everything || now - s.LastResendMs >= interval)
            {
                Resend(s, onlyOld: !everything, now);
            }
        }
    }

    private void Resend(ReceiverStream stream, bool onlyOld, long now)
    {
        if (!stream.HasRoomForResend)
        {
            return;
        }
        stream.LastResendMs = now;
        var max = _options.RetransmitMaxItems;
        // Pending items come sender by sender; looking further than we send lets old items of a later
        // sender through when an earlier sender has many young ones.
        var pending = _readModel().PendingFor(stream.Receiver, onlyOld ? 4 * max : max);
        if (pending is null)
        {
            return;
        }
        IEnumerable<QueuedItem> candidates = pending.Items;
        if (onlyOld)
        {
            lock (_lock)
            {
                var ages = AgesOf(stream.Receiver);
                candidates = pending.Items.Where(ages.IsOld).ToList();
            }
        }
        var items = WithinBudget(candidates, max, _options.SubscriptionQueueBytes / 4);
        if (items.Count == 0)
        {
            return;
        }
        if (_ringFor(stream.Receiver) is not { } ring)
        {
            _metrics.Drop(OutputDropReason.UnknownReceiver);
            return;
        }
        var itemsCounted = false;
        foreach (var frame in _frames.Retransmission(pending with { Items = items }, ring))
        {
            // A re-send that does not fit is not the subscriber's fault: stop here, the next tick goes on.
            if (!stream.TryEnqueue(frame))
            {
                return;
            }
            _metrics.FrameQueued(retransmission: true, frame.Length, itemsCounted ? 0 : items.Count);
            itemsCounted = true;
        }
        LogResent(stream.Receiver, items.Count, onlyOld);
    }

    /// <summary>
    /// Oldest first, bounded in items and body bytes, so one re-send can never fill the subscription's
    /// queue on its own (which would end the subscription, and the next one the same way).
    /// </summary>
    private static List<QueuedItem> WithinBudget(IEnumerable<QueuedItem> candidates, int maxItems, long maxBytes)
    {
        var items = new List<QueuedItem>();
        long bytes = 0;
        foreach (var i in candidates)
        {
            if (items.Count == maxItems || (items.Count > 0 && bytes + i.Data.Length > maxBytes))
            {
                break;
            }
            items.Add(i);
            bytes += i.Data.Length;
        }
        return items;
    }

    private bool EnqueueLive(ReceiverStream stream, byte[] frame, int items)
    {
        if (stream.TryEnqueue(frame))
        {
            _metrics.FrameQueued(retransmission: false, frame.Length, items);
            return true;
        }
        if (stream.EndReason == StreamEnd.Open)
        {
            _metrics.Drop(OutputDropReason.SlowSubscriber);
            LogTooSlow(stream.Receiver);
        }
        Close(stream, StreamEnd.TooSlow);
        return false;
    }

    /// <summary>
    /// Grows when the agreed state jumped (state transfer) or executions' outputs were discarded: either way
    /// some approved items were never streamed live, so everything pending is due for re-sending.
    /// </summary>
    private long ResyncGeneration => _readModel().Restores + _outputs.Discarded;

    private PendingAges AgesOf(int receiver)
    {
        if (!_ages.TryGetValue(receiver, out var a))
        {
            a = new PendingAges((long)_options.RetransmitAfter.TotalMilliseconds);
            _ages[receiver] = a;
        }
        return a;
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "receiver {Receiver} reads too slowly; its subscription is dropped (it resubscribes and gets its pending items again)")]
    private partial void LogTooSlow(int receiver);

    [LoggerMessage(Level = LogLevel.Debug, Message = "re-sent {Items} unacknowledged items to receiver {Receiver} (only old ones: {OnlyOld})")]
    private partial void LogResent(int receiver, int items, bool onlyOld);
}
