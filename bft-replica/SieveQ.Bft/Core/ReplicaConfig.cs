namespace SieveQ.Bft.Core;

/// <summary>
/// Cluster-wide settings. Every replica must run with the same values; times are milliseconds of
/// whatever clock the host feeds in.
/// </summary>
public sealed record ReplicaConfig
{
    public int N { get; init; } = 4;
    public int F => (N - 1) / 3;
    public int Quorum => 2 * F + 1;
    public int Weak => F + 1;

    /// <summary>Age at which a pending request is forwarded to the leader; twice this, the leader is complained about.</summary>
    public long RequestTimeoutMs { get; init; } = 2_000;
    public long HeartbeatIntervalMs { get; init; } = 200;
    /// <summary>A follower that hears nothing from its leader for this long complains even with no requests pending.</summary>
    public long LeaderSilenceTimeoutMs { get; init; } = 1_500;
    /// <summary>Time a replica waits for SYNC after installing a regency before moving to the next; doubles per failed attempt.</summary>
    public long SyncTimeoutMs { get; init; } = 2_000;
    /// <summary>
    /// Slow-leader bound (Aardvark-style): while requests are pending, an instance must be decided at least this often.
    /// Zero disables the check.
    /// </summary>
    public long MaxDecisionIntervalMs { get; init; } = 3_000;

    public int CheckpointInterval { get; init; } = 64;
    public int MaxBatchRequests { get; init; } = 1_024;
    /// <summary>Bytes of requests one batch may carry; one request of <see cref="MaxRequestPayloadBytes"/> always fits.</summary>
    public int MaxBatchBytes { get; init; } = Codec.WireLimits.MaxPayloadBytes + (64 * 1024);

    /// <summary>What a batch spends besides its requests' payloads: its header and each request's id (as the leader counts).</summary>
    public const int BatchHeaderBytes = 64, BatchBytesPerRequest = 4 + 8 + 4 + 4 + Codec.WireLimits.MaxRequestProofBytes;

    /// <summary>
    /// The largest request payload this cluster orders: what one frame carries and one batch holds alone. Replicas
    /// refuse larger requests at admission and clients refuse to send them, so none is retried forever; an
    /// application that batches items into requests must keep each within this.
    /// </summary>
    public int MaxRequestPayloadBytes => Math.Min(Codec.WireLimits.MaxPayloadBytes, MaxBatchBytes - BatchHeaderBytes - BatchBytesPerRequest);
    /// <summary>Requests in flight per client; sequence numbers beyond last-executed + window are refused.</summary>
    /// <summary>
    /// Bytes of timed-out requests one STOP carries (at least one request whatever its size). A STOP repeats every
    /// retransmission interval to every peer while a regency change is pending, so under a backlog unbounded carried
    /// requests filled the peers' send queues and the change never completed.
    /// </summary>
    public int MaxStopCarriedBytes { get; init; } = 256 * 1024;

    public int ClientWindow { get; init; } = 1_024;
    public int MaxPendingTotal { get; init; } = 65_536;
    /// <summary>Bound on the replicated client table; requests from further clients are refused identically everywhere.</summary>
    public int MaxClients { get; init; } = 10_000;
    /// <summary>
    /// Replies kept per client in the replicated state so retransmissions are answered after restarts
    /// and state transfers. Memory is MaxClients x this x result size: applications should keep results small.
    /// </summary>
    public int RepliesRememberedPerClient { get; init; } = 256;
    public long TimestampSkewMs { get; init; } = 1_000;
    /// <summary>How far ahead of the current instance a message may be buffered; beyond it is a flood and is dropped.</summary>
    public int MaxFutureInstances { get; init; } = 16;
    public int MaxOutOfContextPerPeer { get; init; } = 64;
    /// <summary>Minimum spacing between two state bodies served to the same peer.</summary>
    public long StateServeIntervalMs { get; init; } = 1_000;
    public long StateTransferTimeoutMs { get; init; } = 1_500;
    /// <summary>
    /// Size of the chunks a checkpoint travels in (the last one is shorter). Part of the agreed manifest, so every
    /// replica must use the same value; the simulator uses a small one so that its states span several chunks.
    /// </summary>
    public int StateChunkBytes { get; init; } = 1024 * 1024;
    /// <summary>Chunk requests a recovering replica has outstanding at once: what it may receive beyond what it asked for is nothing.</summary>
    public int StateChunksInFlight { get; init; } = 4;
    /// <summary>A chunk not answered within this is asked of another replica.</summary>
    public long StateChunkTimeoutMs { get; init; } = 500;
    /// <summary>Chunks asked again (refused, bad, or late) before a fetch is given up and left to the next attempt.</summary>
    public int StateChunkRetries { get; init; } = 32;
    /// <summary>Chunk requests answered per peer per <see cref="StateServeIntervalMs"/> (refusals included); the rest are dropped.</summary>
    public int StateChunksServedPerInterval { get; init; } = 32;

    public void Validate()
    {
        if (N < 4 || (N - 1) % 3 != 0 || N > Codec.WireLimits.MaxReplicas)
        {
            throw new ArgumentException($"n must be 3f+1 with f >= 1 and at most {Codec.WireLimits.MaxReplicas}, got {N}");
        }
        if (CheckpointInterval < 2 || MaxBatchRequests < 1 || ClientWindow < 1 || MaxPendingTotal < 1 || RepliesRememberedPerClient < 1)
        {
            throw new ArgumentException("checkpoint interval, batch size, client window and pending bound must be positive");
        }
        if (MaxStopCarriedBytes < 1)
        {
            throw new ArgumentException("the bytes a STOP carries must be positive");
        }
        if (MaxBatchBytes < 1024)
        {
            throw new ArgumentException($"batches of {MaxBatchBytes} bytes are too small; at least 1024");
        }
        if (MaxBatchRequests > Codec.WireLimits.MaxRequestsPerBatch)
        {
            throw new ArgumentException($"batch size above the wire limit {Codec.WireLimits.MaxRequestsPerBatch}");
        }
        if (RequestTimeoutMs <= 0 || HeartbeatIntervalMs <= 0 || LeaderSilenceTimeoutMs <= HeartbeatIntervalMs || SyncTimeoutMs <= 0)
        {
            throw new ArgumentException("time-outs must be positive and the silence time-out longer than the heartbeat");
        }
        if (StateChunkBytes < Codec.WireLimits.MinStateChunkBytes || StateChunkBytes > Codec.WireLimits.MaxStateChunkBytes)
        {
            throw new ArgumentException($"state chunks of {StateChunkBytes} bytes: must be {Codec.WireLimits.MinStateChunkBytes}..{Codec.WireLimits.MaxStateChunkBytes}");
        }
        if (StateChunksInFlight < 1 || StateChunkTimeoutMs <= 0 || StateChunkRetries < 0 || StateChunksServedPerInterval < StateChunksInFlight)
        {
            throw new ArgumentException("state chunks in flight and the chunk time-out must be positive, and a peer must be served at least as many chunks per interval as it has in flight");
        }
    }
}
