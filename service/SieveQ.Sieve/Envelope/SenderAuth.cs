namespace SieveQ.Sieve.Envelope;

public enum SenderAuthKind : byte
{
    /// <summary>An ECDSA P-256 signature over this message's signed bytes.</summary>
    Signature = 1,

    /// <summary>A signature over a Merkle root plus this message's leaf index and inclusion path.</summary>
    Batch = 2,
}

/// <summary>
/// How a sender message proves its origin. For <see cref="SenderAuthKind.Batch"/>,
/// <see cref="Signature"/> is the root signature, and the root is recomputed from the leaf and path.
/// </summary>
public sealed record SenderAuth(SenderAuthKind Kind, ReadOnlyMemory<byte> Signature, int LeafIndex, int LeafCount, ReadOnlyMemory<byte> Path)
{
    public static SenderAuth Single(ReadOnlyMemory<byte> signature) => new(SenderAuthKind.Signature, signature, 0, 1, ReadOnlyMemory<byte>.Empty);

    public static SenderAuth InBatch(ReadOnlyMemory<byte> rootSignature, int leafIndex, int leafCount, ReadOnlyMemory<byte> path) =>
        new(SenderAuthKind.Batch, rootSignature, leafIndex, leafCount, path);
}
