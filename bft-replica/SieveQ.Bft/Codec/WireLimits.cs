namespace SieveQ.Bft.Codec;

/// <summary>
/// Hard bounds the decoder enforces before it allocates anything, so a hostile frame cannot make
/// a replica allocate more than a frame's worth of memory.
/// </summary>
public static class WireLimits
{
    public const int MaxFrameBytes = 32 * 1024 * 1024;
    /// <summary>
    /// Largest client request payload a frame may carry. A cluster's own bound is
    /// <see cref="Core.ReplicaConfig.MaxRequestPayloadBytes"/> (this, or less when its batches are smaller); an
    /// application derives what it accepts at its edge from that, never from a constant of its own.
    /// </summary>
    public const int MaxPayloadBytes = 8 * 1024 * 1024;
    public const int MaxRequestsPerBatch = 16_384;
    public const int MaxRequestsPerForward = 4_096;
    public const int MaxReplicas = 64;
    public const int MaxCertificates = 2;
    public const int MaxSignatureBytes = 160;
    /// <summary>A request's proof: a P-256 signature in IEEE P1363 form is 64 bytes.</summary>
    public const int MaxRequestProofBytes = 96;
    public const int MaxLogEntries = 4_096;
    public const int MaxSnapshotBytes = 64 * 1024 * 1024 - 1024;
    public const int MaxResultBytes = 64 * 1024;
    /// <summary>
    /// Bounds on state-transfer chunks. A checkpoint travels as at most <see cref="MaxStateChunks"/> chunks (its manifest,
    /// one hash each, then takes at most 2 MiB of a state reply) of at most <see cref="MaxStateChunkBytes"/> each.
    /// </summary>
    public const int MaxStateChunks = 65_536;
    public const int MinStateChunkBytes = 256;
    public const int MaxStateChunkBytes = 4 * 1024 * 1024;
    /// <summary>The largest replicated state (checkpoint) a replica accepts: what the write-ahead log holds in one record.</summary>
    public const long MaxStateBytes = MaxSnapshotBytes + 1024;
}
