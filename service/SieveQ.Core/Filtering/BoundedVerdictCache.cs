using System.Collections.Concurrent;
using SieveQ.Bft.Protocol;

namespace SieveQ.Core.Filtering;

/// <summary>
/// A bounded, thread-safe map from a hash to a verification verdict, in two generations: when the
/// young generation fills it becomes the old one and the previous old one is dropped. Losing an
/// entry only costs a re-verification; and since every verdict is a pure function of the hashed bytes
/// (and the enrolment), a replica that misses the cache reaches the same verdict as one that hits.
/// </summary>
public sealed class BoundedVerdictCache<TVerdict> where TVerdict : struct
{
    private readonly int _generationSize;
    private ConcurrentDictionary<Digest, TVerdict> _young = new();
    private ConcurrentDictionary<Digest, TVerdict> _old = new();
    private readonly Lock _rotate = new();

    /// <summary>
    /// Puts into the young generation since it was made. ConcurrentDictionary.Count takes every
    /// stripe lock; asking it on each put serialised the parallel signature checks behind one another
    /// (a sixth of a replica's CPU went to lock spinning at full load).
    /// </summary>
    private int _youngPuts;

    public BoundedVerdictCache(int capacity = 1 << 18)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 2);
        _generationSize = capacity / 2;
    }

    public int Count => _young.Count + _old.Count;

    public bool TryGet(Digest key, out TVerdict verdict) => _young.TryGetValue(key, out verdict) || _old.TryGetValue(key, out verdict);

    public void Put(Digest key, TVerdict verdict)
    {
        _young[key] = verdict;
        if (Interlocked.Increment(ref _youngPuts) >= _generationSize)
        {
            lock (_rotate)
            {
                if (Volatile.Read(ref _youngPuts) >= _generationSize)
                {
                    _old = _young;
                    _young = new ConcurrentDictionary<Digest, TVerdict>();
                    Volatile.Write(ref _youngPuts, 0);
                }
            }
        }
    }

    /// <summary>Forgets a verdict once it has been consumed at execution.</summary>
    public void Remove(Digest key)
    {
        _young.TryRemove(key, out _);
        _old.TryRemove(key, out _);
    }
}
