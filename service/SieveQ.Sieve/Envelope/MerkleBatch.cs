using SieveQ.Bft.Protocol;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// Merkle tree over a sender's batch so one ECDSA signature (over the root) covers many messages,
/// each of which still verifies on its own with its inclusion path.
/// <para>
/// Leaves and inner nodes are hashed under different tags, so an inner node can never be passed off
/// as a leaf (second-preimage splicing). An odd node at the end of a level is promoted unchanged to
/// the next level rather than paired with a copy of itself: duplicating it (Bitcoin's rule) lets two
/// different leaf lists share a root (CVE-2012-2459). The leaf count is signed together with the root,
/// and fixes the tree shape, so the path length for a given index is exact and checked.
/// </para>
/// </summary>
public sealed class MerkleBatch
{
    private readonly List<Digest[]> _levels;

    private MerkleBatch(List<Digest[]> levels)
    {
        _levels = levels;
    }

    public int LeafCount => _levels[0].Length;

    public Digest Root => _levels[^1][0];

    /// <summary>Leaf hash of one message: tagged hash of the message's signed bytes.</summary>
    public static Digest Leaf(ReadOnlySpan<byte> signedRegion) => TaggedHash.Sha256(DomainTags.MerkleLeaf, signedRegion);

    public static Digest Node(Digest left, Digest right)
    {
        Span<byte> pair = stackalloc byte[2 * Digest.Size];
        left.CopyTo(pair);
        right.CopyTo(pair[Digest.Size..]);
        return TaggedHash.Sha256(DomainTags.MerkleNode, pair);
    }

    public static MerkleBatch Build(IReadOnlyList<Digest> leaves)
    {
        ArgumentNullException.ThrowIfNull(leaves);
        if (leaves.Count == 0)
        {
            throw new ArgumentException("a Merkle batch needs at least one leaf", nameof(leaves));
        }
        var levels = new List<Digest[]> { leaves.ToArray() };
        while (levels[^1].Length > 1)
        {
            var below = levels[^1];
            var up = new Digest[(below.Length + 1) / 2];
            for (var i = 0; i < up.Length; i++)
            {
                var l = 2 * i;
                up[i] = l + 1 < below.Length ? Node(below[l], below[l + 1]) : below[l];
            }
            levels.Add(up);
        }
        return new MerkleBatch(levels);
    }

    /// <summary>Sibling hashes from the leaf up, concatenated (32 bytes each); promoted levels add none.</summary>
    public byte[] Path(int index)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(index, LeafCount);
        var path = new List<Digest>();
        for (var level = 0; level < _levels.Count - 1; level++)
        {
            var nodes = _levels[level];
            var sibling = index ^ 1;
            if (sibling < nodes.Length)
            {
                path.Add(nodes[sibling]);
            }
            index >>= 1;
        }
        var bytes = new byte[path.Count * Digest.Size];
        for (var i = 0; i < path.Count; i++)
        {
            path[i].CopyTo(bytes.AsSpan(i * Digest.Size));
        }
        return bytes;
    }

    /// <summary>
    /// Recomputes the root from a leaf and its path; false when the path does not have exactly the
    /// shape that (index, count) dictates.
    /// </summary>
    public static bool TryComputeRoot(Digest leaf, int index, int count, ReadOnlySpan<byte> path, out Digest root) =>
        TryComputeRoot(leaf, index, count, path, Node, out root);

    /// <summary>As above, with <paramref name="node"/> computing inner nodes (a memo of <see cref="Node"/>).</summary>
    public static bool TryComputeRoot(Digest leaf, int index, int count, ReadOnlySpan<byte> path, Func<Digest, Digest, Digest> node, out Digest root)
    {
        root = default;
        if (count < 1 || index < 0 || index >= count || path.Length % Digest.Size != 0)
        {
            return false;
        }
        var current = leaf;
        var used = 0;
        while (count > 1)
        {
            var sibling = index ^ 1;
            if (sibling < count)
            {
                if (used + Digest.Size > path.Length)
                {
                    return false;
                }
                var s = new Digest(path.Slice(used, Digest.Size));
                used += Digest.Size;
                current = (index & 1) == 0 ? node(current, s) : node(s, current);
            }
            index >>= 1;
            count = (count + 1) / 2;
        }
        if (used != path.Length)
        {
            return false;
        }
        root = current;
        return true;
    }
}
