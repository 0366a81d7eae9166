using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// Tells, for one receiver, whether a still unacknowledged item is older than the retransmission
/// interval, without a timestamp per item: route numbers grow with time on each route, so it keeps, once
/// per tick, the highest route number streamed per sender, and an item is old when it is at or below
/// the mark taken at least one interval ago. Items never streamed live since this replica started
/// (restored from its log or a snapshot) are old once the replica has been up for one interval.
/// Not thread-safe: <see cref="ReceiverStreams"/> holds its lock around every call.
/// </summary>
internal sealed class PendingAges
{
    private readonly long _ageMs;
    private readonly Dictionary<int, long> _latest = [];
    private readonly Dictionary<int, long> _firstStreamed = [];
    private readonly Queue<(long AtMs, Dictionary<int, long> Marks)> _history = new();
    private Dictionary<int, long>? _cutoff;

    public PendingAges(long ageMs) => _ageMs = ageMs;

    public void Observe(OutboxBatch batch)
    {
        foreach (var item in batch.Items)
        {
            _firstStreamed.TryAdd(item.Sender, item.RouteSeq);
            if (!_latest.TryGetValue(item.Sender, out var mark) || item.RouteSeq > mark)
            {
                _latest[item.Sender] = item.RouteSeq;
            }
        }
    }

    public void Tick(long nowMs)
    {
        _history.Enqueue((nowMs, new Dictionary<int, long>(_latest)));
        while (_history.Count > 0 && nowMs - _history.Peek().AtMs >= _ageMs)
        {
            _cutoff = _history.Dequeue().Marks;
        }
    }

    public bool IsOld(QueuedItem item)
    {
        if (_cutoff is null)
        {
            return false;
        }
        if (_cutoff.TryGetValue(item.Sender, out var mark) && item.RouteSeq <= mark)
        {
            return true;
        }
        return !_firstStreamed.TryGetValue(item.Sender, out var first) || item.RouteSeq < first;
    }
}
