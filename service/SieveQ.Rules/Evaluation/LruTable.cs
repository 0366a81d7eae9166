namespace SieveQ.Rules.Evaluation;

/// <summary>
/// A bounded table whose eviction order is a pure function of the agreed message order: every use
/// stamps the entry with the evaluator's use counter and moves it to the back; a full table drops the
/// entry at the front (least recently used). Lookups go through a dictionary, but nothing ever iterates
/// it, so hash order cannot leak into a verdict or a snapshot.
/// </summary>
internal sealed class LruTable<TKey, TValue>(int capacity)
    where TKey : notnull
    where TValue : class, ILruEntry<TKey>
{
    private readonly Dictionary<TKey, LinkedListNode<TValue>> _map = [];
    private readonly LinkedList<TValue> _order = new();

    public int Capacity { get; } = capacity;

    public int Count => _map.Count;

    public long Evictions { get; set; }

    public TValue? Find(TKey key) => _map.TryGetValue(key, out var node) ? node.Value : null;

    public void Touch(TValue entry, long stamp)
    {
        entry.Stamp = stamp;
        if (_map.TryGetValue(entry.Key, out var node) && node != _order.Last)
        {
            _order.Remove(node);
            _order.AddLast(node);
        }
    }

    /// <summary>Adds a new entry as the most recent; returns the evicted entry, if the table was full.</summary>
    public TValue? Add(TValue entry, long stamp)
    {
        TValue? evicted = null;
        if (_map.Count >= Capacity && _order.First is { } oldest)
        {
            evicted = oldest.Value;
            _order.RemoveFirst();
            _map.Remove(evicted.Key);
            Evictions++;
        }
        entry.Stamp = stamp;
        _map.Add(entry.Key, _order.AddLast(entry));
        return evicted;
    }

    /// <summary>Entries from least to most recently used.</summary>
    public IEnumerable<TValue> InUseOrder() => _order;

    public void Clear()
    {
        _map.Clear();
        _order.Clear();
    }
}

internal interface ILruEntry<out TKey>
{
    TKey Key { get; }

    long Stamp { get; set; }
}

/// <summary>What the rules remember about one sender: suspicion and rate windows.</summary>
internal sealed class SenderState(int id, int rates) : ILruEntry<int>
{
    public int Key { get; } = id;

    public long Stamp { get; set; }

    public Sieve.Filtering.SuspicionCounter? Suspicion { get; set; }

    public RateWindow?[] Rates { get; } = new RateWindow?[rates];
}

/// <summary>A flow: one state machine between an ordered pair of parties (requester, responder).</summary>
internal readonly record struct FlowKey(int Machine, int Requester, int Responder);

internal sealed class FlowState(FlowKey key) : ILruEntry<FlowKey>
{
    public FlowKey Key { get; } = key;

    public long Stamp { get; set; }

    public int State { get; set; }

    public int Outstanding { get; set; }

    public long LastSeenMs { get; set; }
}
