using SieveQ.Bft.Protocol;
using SieveQ.Core.Filtering;

namespace SieveQ.Core.Replica;

/// <summary>
/// Signature verdicts keyed by the hash of the signed item's bytes as received
/// (<see cref="Envelope.TaggedHash.MessageHash"/>). <see cref="SieveRequestVerifier"/> fills it on
/// the ordering host's worker threads before ordering; <see cref="SieveReplicaApplication"/> consumes
/// it at execution and verifies inline on a miss. The verdict depends only on the bytes, so hit or
/// miss, every replica decides the same.
/// </summary>
public sealed class SignatureVerdictCache
{
    private readonly BoundedVerdictCache<SignatureVerdict> _cache;

    public SignatureVerdictCache(int capacity = 1 << 18)
    {
        _cache = new BoundedVerdictCache<SignatureVerdict>(capacity);
    }

    public int Count => _cache.Count;

    private long _hits;
    private long _misses;

    /// <summary>Verdicts found at execution (verified ahead of ordering).</summary>
    public long Hits => Volatile.Read(ref _hits);

    /// <summary>Verdicts missing at execution (verified inline).</summary>
    public long Misses => Volatile.Read(ref _misses);

    public void Put(Digest messageHash, SignatureVerdict verdict) => _cache.Put(messageHash, verdict);

    /// <summary>Takes the verdict out (each item executes once).</summary>
    public bool TryTake(Digest messageHash, out SignatureVerdict verdict)
    {
        if (_cache.TryGet(messageHash, out verdict))
        {
            _cache.Remove(messageHash);
            Interlocked.Increment(ref _hits);
            return true;
        }
        Interlocked.Increment(ref _misses);
        return false;
    }

    public bool Contains(Digest messageHash) => _cache.TryGet(messageHash, out _);
}
