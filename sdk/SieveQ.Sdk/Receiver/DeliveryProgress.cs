using SieveQ.Sieve.Envelope;

namespace SieveQ.Sdk.Receiver;

/// <summary>
/// Per sender, the last route number handed to the application and the last one committed. Commits
/// follow what the application took, not what the voter decided: decided deliveries may still wait in
/// the delivery queue, and committing them would lose them in a crash. Thread-safe.
/// </summary>
internal sealed class DeliveryProgress
{
    private readonly Lock _lock = new();
    private readonly SortedDictionary<int, long> _handed = [];
    private readonly SortedDictionary<int, long> _committed = [];
    private long _handedSinceCommit;

    public DeliveryProgress(IReadOnlyList<DeliveredCursor> committed)
    {
        foreach (var c in committed)
        {
            _handed[c.Sender] = c.DeliveredUpTo;
            _committed[c.Sender] = c.DeliveredUpTo;
        }
    }

    public long HandedSinceCommit
    {
        get
        {
            lock (_lock)
            {
                return _handedSinceCommit;
            }
        }
    }

    public void Hand(int sender, long routeSeq)
    {
        lock (_lock)
        {
            _handed[sender] = routeSeq;
            _handedSinceCommit++;
        }
    }

    /// <summary>
    /// The cursors a commit would persist: everything handed over, or at most <paramref name="processed"/>
    /// per sender when given; never below what is committed. Null when nothing would move.
    /// </summary>
    public IReadOnlyList<DeliveredCursor>? Propose(IReadOnlyList<DeliveredCursor>? processed)
    {
        lock (_lock)
        {
            var next = new SortedDictionary<int, long>(_committed);
            var moved = false;
            foreach (var (sender, handed) in _handed)
            {
                var upTo = handed;
                if (processed is not null)
                {
                    upTo = processed.Where(p => p.Sender == sender).Select(p => Math.Min(p.DeliveredUpTo, handed)).DefaultIfEmpty(0).Max();
                }
                var committed = _committed.GetValueOrDefault(sender);
                if (upTo > committed)
                {
                    next[sender] = upTo;
                    moved = true;
                }
            }
            return moved ? next.Select(kv => new DeliveredCursor(kv.Key, kv.Value)).ToArray() : null;
        }
    }

    /// <summary>Records a persisted commit; returns how many deliveries it covered beyond the previous one.</summary>
    public long Commit(IReadOnlyList<DeliveredCursor> cursors, bool everythingHanded)
    {
        lock (_lock)
        {
            long covered = 0;
            foreach (var c in cursors)
            {
                covered += c.DeliveredUpTo - _committed.GetValueOrDefault(c.Sender);
                _committed[c.Sender] = c.DeliveredUpTo;
            }
            _handedSinceCommit = everythingHanded ? 0 : Math.Max(0, _handedSinceCommit - covered);
            return covered;
        }
    }

    public IReadOnlyList<DeliveredCursor> Committed()
    {
        lock (_lock)
        {
            return _committed.Select(kv => new DeliveredCursor(kv.Key, kv.Value)).ToArray();
        }
    }
}
