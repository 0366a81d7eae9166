using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Filtering;

/// <summary>
/// Remembers recent Merkle inner nodes by their two children. Every message of a sender's flush climbs
/// its own path to the root, and neighbouring messages share all but the lowest nodes of it: without
/// this, a 256-message flush cost each replica eight one-shot SHA-256 calls per message (mostly
/// OpenSSL's per-call overhead), with it about two. A hit returns exactly what
/// <see cref="MerkleBatch.Node"/> computed from the same two children, so verdicts never depend on
/// what a replica happens to remember. Thread-safe; bounded by entries.
/// </summary>
public sealed class MerkleNodeMemo(int capacity = 1 << 16)
{
    private readonly BoundedVerdictCache<Children, Digest> _nodes = new(capacity);
    private long _hits;
    private long _misses;

    public long Hits => Interlocked.Read(ref _hits);

    public long Misses => Interlocked.Read(ref _misses);

    public Digest Node(Digest left, Digest right)
    {
        var key = new Children(left, right);
        if (_nodes.TryGet(key, out var parent))
        {
            Interlocked.Increment(ref _hits);
            return parent;
        }
        Interlocked.Increment(ref _misses);
        parent = MerkleBatch.Node(left, right);
        _nodes.Put(key, parent);
        return parent;
    }

    private readonly record struct Children(Digest Left, Digest Right)
    {
        // Seeded per process by HashCode, so crafted path siblings cannot pile up in one bucket.
        public override int GetHashCode() => HashCode.Combine(Left, Right);
    }
}
