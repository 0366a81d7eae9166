using System.Collections.Concurrent;

namespace SieveQ.Sieve.Filtering;

/// <summary>
/// A bounded, thread-safe map from a key to a verification verdict, in two generations: when the
/// young generation fills (by entries, or by key bytes when a weight is given; the put that fills it may
/// go over by its own key) it becomes the old one and the previous old one is dropped. Losing an entry
/// only costs a re-verification; and since every verdict is a pure function of the key (and the
/// enrolment), a replica that misses the cache reaches the same verdict as one that hits.
/// </summary>
public sealed class BoundedVerdictCache<TKey, TVerdict> where TKey : notnull where TVerdict : struct
{
    private readonly int _generationSize;
    private readonly long _generationBytes;
    private readonly Func<TKey, int>? _weight;
    private ConcurrentDictionary<TKey, TVerdict> _young = new();
    private ConcurrentDictionary<TKey, TVerdict> _old = new();
    private readonly Lock _rotate = new();

    /// <summary>
    /// Puts (and their key bytes) into the young generation since it was made. ConcurrentDictionary.Count
    /// takes every stripe lock; asking it on each put serialised the parallel signature checks behind one
    /// another (a sixth of a replica's CPU went to lock spinning at full load).
    /// </summary>
    private int _youngPuts;
    private long _youngBytes;
    private long _oldBytes;

    /// <param name="capacity">Entries in both generations together.</param>
    /// <param name="byteBudget">Key bytes in both generations together, as <paramref name="weight"/> counts them.</param>
    /// <param name="weight">The bytes a key holds; null when keys are small and fixed-size.</param>
    public BoundedVerdictCache(int capacity = 1 << 18, long byteBudget = long.MaxValue, Func<TKey, int>? weight = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 2);
        ArgumentOutOfRangeException.ThrowIfLessThan(byteBudget, 2);
        _generationSize = capacity / 2;
        _generationBytes = byteBudget / 2;
        _weight = weight;
    }

    public int Count => _young.Count + _old.Count;

    /// <summary>Key bytes held (zero without a weight); an upper bound, since removals are not subtracted.</summary>
    public long Bytes => Interlocked.Read(ref _youngBytes) + Interlocked.Read(ref _oldBytes);

    public bool TryGet(TKey key, out TVerdict verdict) => _young.TryGetValue(key, out verdict) || _old.TryGetValue(key, out verdict);

    public void Put(TKey key, TVerdict verdict)
    {
        _young[key] = verdict;
        var bytes = _weight is null ? 0 : Interlocked.Add(ref _youngBytes, _weight(key));
        if (Interlocked.Increment(ref _youngPuts) >= _generationSize || bytes >= _generationBytes)
        {
            lock (_rotate)
            {
                if (Volatile.Read(ref _youngPuts) >= _generationSize || Interlocked.Read(ref _youngBytes) >= _generationBytes)
                {
                    _old = _young;
                    _young = new ConcurrentDictionary<TKey, TVerdict>();
                    Interlocked.Exchange(ref _oldBytes, Interlocked.Exchange(ref _youngBytes, 0));
                    Volatile.Write(ref _youngPuts, 0);
                }
            }
        }
    }

    /// <summary>Takes a verdict out, for one that is consumed once (at execution).</summary>
    public bool TryTake(TKey key, out TVerdict verdict) => _young.TryRemove(key, out verdict) || _old.TryRemove(key, out verdict);
}
