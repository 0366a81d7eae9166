using SieveQ.Core.Filtering;

namespace SieveQ.Core.Replica;

/// <summary>
/// Signature verdicts keyed by the signed item's bytes as received (<see cref="ItemKey"/>), bounded by
/// entries and by bytes. <see cref="SieveRequestVerifier"/> fills it on
/// the ordering host's worker threads before ordering; <see cref="SieveReplicaApplication"/> consumes
/// it at execution and verifies inline on a miss. The verdict depends only on the bytes, so hit or
/// miss, every replica decides the same.
/// </summary>
public sealed class SignatureVerdictCache
{
    /// <summary>Default bound on the item bytes held: about 100,000 items of 600 bytes.</summary>
    public const long DefaultByteBudget = 64L << 20;
    private readonly BoundedVerdictCache<ItemKey, SignatureVerdict> _cache;

    public SignatureVerdictCache(int capacity = 1 << 18, long byteBudget = DefaultByteBudget)
    {
        _cache = new BoundedVerdictCache<ItemKey, SignatureVerdict>(capacity, byteBudget, k => k.Length);
    }

    public int Count => _cache.Count;

    /// <summary>Item bytes held (an upper bound: consumed entries are not subtracted until their generation goes).</summary>
    public long Bytes => _cache.Bytes;

    private long _hits;
    private long _misses;

    /// <summary>Verdicts found at execution (verified ahead of ordering).</summary>
    public long Hits => Volatile.Read(ref _hits);

    /// <summary>Verdicts missing at execution (verified inline).</summary>
    public long Misses => Volatile.Read(ref _misses);

    /// <summary>Stores a verdict under its own copy of the item's bytes.</summary>
    public void Put(ItemKey item, SignatureVerdict verdict) => _cache.Put(item.Owned(), verdict);

    /// <summary>Takes the verdict out (each item executes once).</summary>
    public bool TryTake(ItemKey item, out SignatureVerdict verdict)
    {
        if (_cache.TryTake(item, out verdict))
        {
            Interlocked.Increment(ref _hits);
            return true;
        }
        Interlocked.Increment(ref _misses);
        return false;
    }

    public bool Contains(ItemKey item) => _cache.TryGet(item, out _);
}
