namespace SieveQ.Controller.Replicas;

/// <summary>One notice of the replicas' agreed execution: the same on every correct replica.</summary>
public readonly record struct ReplicaNotice(string Action, uint Subject, long AgreedTimeMs);

/// <summary>What a report did to the tally.</summary>
public enum ReplicaNoticeStanding
{
    /// <summary>Counted; fewer than f+1 distinct replicas have reported the notice so far.</summary>
    Waiting,

    /// <summary>This report made f+1: the controller acts now, once.</summary>
    Reached,

    /// <summary>f+1 had reported it before; nothing more happens.</summary>
    AlreadyReached,

    /// <summary>The replica already has its share of notices waiting; this one is not counted.</summary>
    ReplicaShareFull,
}

/// <summary>
/// Counts the replicas that reported each notice and says when f+1 distinct ones agree, exactly once per notice. One
/// Byzantine replica can report anything, but alone it never reaches f+1, and it can fill only its own share of the
/// table (<see cref="MaxWaitingPerReplica"/>), so it cannot push out what correct replicas reported. Waiting notices
/// are forgotten after <see cref="WaitingFor"/>; reached ones are remembered up to <see cref="MaxReached"/> (oldest
/// first out) so that the reports of the replicas after the f+1-th do not act again. Thread-safe.
/// </summary>
public sealed class ReplicaNoticeTally
{
    public const int MaxWaitingPerReplica = 256;
    public const int MaxReached = 4096;
    public static readonly TimeSpan WaitingFor = TimeSpan.FromMinutes(10);

    private readonly int _f;
    private readonly TimeProvider _time;
    private readonly Lock _lock = new();
    private readonly Dictionary<ReplicaNotice, (HashSet<int> Replicas, long FirstMs)> _waiting = [];
    private readonly Dictionary<int, int> _waitingPerReplica = [];
    private readonly HashSet<ReplicaNotice> _reached = [];
    private readonly Queue<ReplicaNotice> _reachedOrder = new();

    public ReplicaNoticeTally(int f, TimeProvider? time = null)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(f);
        _f = f;
        _time = time ?? TimeProvider.System;
    }

    public int Waiting
    {
        get
        {
            lock (_lock)
            {
                return _waiting.Count;
            }
        }
    }

    /// <summary>Counts <paramref name="replica"/>'s report of <paramref name="notice"/>; on <see cref="ReplicaNoticeStanding.Reached"/>, <paramref name="replicas"/> are the f+1.</summary>
    public ReplicaNoticeStanding Report(int replica, ReplicaNotice notice, out IReadOnlyList<int> replicas)
    {
        replicas = [];
        var now = _time.GetUtcNow().ToUnixTimeMilliseconds();
        lock (_lock)
        {
            Expire(now);
            if (_reached.Contains(notice))
            {
                return ReplicaNoticeStanding.AlreadyReached;
            }
            if (!_waiting.TryGetValue(notice, out var entry))
            {
                if (_waitingPerReplica.GetValueOrDefault(replica) >= MaxWaitingPerReplica)
                {
                    return ReplicaNoticeStanding.ReplicaShareFull;
                }
                entry = ([], now);
                _waiting.Add(notice, entry);
            }
            else if (!entry.Replicas.Contains(replica) && _waitingPerReplica.GetValueOrDefault(replica) >= MaxWaitingPerReplica)
            {
                return ReplicaNoticeStanding.ReplicaShareFull;
            }
            if (entry.Replicas.Add(replica))
            {
                _waitingPerReplica[replica] = _waitingPerReplica.GetValueOrDefault(replica) + 1;
            }
            if (entry.Replicas.Count < _f + 1)
            {
                return ReplicaNoticeStanding.Waiting;
            }
            replicas = entry.Replicas.Order().ToList();
            Forget(notice, entry.Replicas);
            _reached.Add(notice);
            _reachedOrder.Enqueue(notice);
            if (_reachedOrder.Count > MaxReached)
            {
                _reached.Remove(_reachedOrder.Dequeue());
            }
            return ReplicaNoticeStanding.Reached;
        }
    }

    private void Expire(long now)
    {
        var limit = (long)WaitingFor.TotalMilliseconds;
        foreach (var (notice, entry) in _waiting.Where(kv => now - kv.Value.FirstMs > limit).ToList())
        {
            Forget(notice, entry.Replicas);
        }
    }

    private void Forget(ReplicaNotice notice, HashSet<int> replicas)
    {
        _waiting.Remove(notice);
        foreach (var r in replicas)
        {
            _waitingPerReplica[r]--;
        }
    }
}
