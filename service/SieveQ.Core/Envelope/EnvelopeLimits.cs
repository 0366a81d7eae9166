namespace SieveQ.Core.Envelope;

/// <summary>
/// Upper bounds every decoder enforces before it allocates, so a hostile length prefix can never
/// make a parser reserve more memory than a legitimate structure could need.
/// </summary>
public static class EnvelopeLimits
{
    /// <summary>Largest application DATA in one sender message (1 MiB).</summary>
    public const int MaxDataBytes = 1 << 20;

    /// <summary>Largest number of items in one batch structure (ordering request, output batch, fetch).</summary>
    public const int MaxItems = 65_536;

    /// <summary>Deepest Merkle inclusion path: 2^32 leaves is far beyond any batch a sender builds.</summary>
    public const int MaxMerkleDepth = 32;

    /// <summary>ECDSA P-256 signatures travel in IEEE P1363 form: r || s, 32 bytes each.</summary>
    public const int SignatureBytes = 64;

    /// <summary>SHA-256 output and HMAC-SHA256 tag length.</summary>
    public const int HashBytes = 32;

    /// <summary>Largest whole ordering request payload (16 MiB), matching what the ordering layer accepts.</summary>
    public const int MaxOrderingPayloadBytes = 16 << 20;

    /// <summary>Largest number of per-sender entries in one receiver acknowledgement.</summary>
    public const int MaxAckEntries = 65_536;
}
