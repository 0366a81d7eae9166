using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// Signature verdicts keyed by the signed item's bytes as received (<see cref="ItemKey"/>), bounded by
/// entries and by bytes, with what the rules computed ahead from an authentic sender message's payload
/// (<see cref="IPayloadPrescan"/>) riding along, so that costs no second copy of the bytes.
/// <see cref="SieveRequestVerifier"/> fills it on
/// the ordering host's worker threads before ordering; <see cref="SieveReplicaApplication"/> consumes
/// it at execution and verifies inline on a miss. The verdict depends only on the bytes, so hit or
/// miss, every replica decides the same.
/// </summary>
public sealed class SignatureVerdictCache
{
    /// <summary>Default bound on the item bytes held: about 100,000 items of 600 bytes.</summary>
    public const long DefaultByteBudget = 64L << 20;
    private readonly BoundedVerdictCache<ItemKey, Entry> _cache;

    public SignatureVerdictCache(int capacity = 1 << 18, long byteBudget = DefaultByteBudget)
    {
        _cache = new BoundedVerdictCache<ItemKey, Entry>(capacity, byteBudget, k => k.Length);
    }

    /// <summary>The verdict and, for an authentic sender message, what the rules computed from its payload.</summary>
    private readonly record struct Entry(SignatureVerdict Verdict, PayloadPrescan Prescan);

    public int Count => _cache.Count;

    /// <summary>Item bytes held (an upper bound: consumed entries are not subtracted until their generation goes).</summary>
    public long Bytes => _cache.Bytes;

    private long _hits;
    private long _misses;

    /// <summary>Verdicts found at execution (verified ahead of ordering).</summary>
    public long Hits => Volatile.Read(ref _hits);

    /// <summary>Verdicts missing at execution (verified inline).</summary>
    public long Misses => Volatile.Read(ref _misses);

    /// <summary>Stores a verdict (and a payload prescan) under its own copy of the item's bytes.</summary>
    public void Put(ItemKey item, SignatureVerdict verdict, PayloadPrescan prescan = default) => _cache.Put(item.Owned(), new Entry(verdict, prescan));

    /// <summary>Takes the verdict out (each item executes once).</summary>
    public bool TryTake(ItemKey item, out SignatureVerdict verdict) => TryTake(item, out verdict, out _);

    /// <summary>Takes the verdict and the payload prescan stored with it out (each item executes once).</summary>
    public bool TryTake(ItemKey item, out SignatureVerdict verdict, out PayloadPrescan prescan)
    {
        if (_cache.TryTake(item, out var entry))
        {
            Interlocked.Increment(ref _hits);
            (verdict, prescan) = entry;
            return true;
        }
        Interlocked.Increment(ref _misses);
        (verdict, prescan) = (default, default);
        return false;
    }

    public bool Contains(ItemKey item) => _cache.TryGet(item, out _);
}
