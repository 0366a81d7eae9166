using SieveQ.Transport.Hardening;

namespace SieveQ.ReplicaSq;

/// <summary>Bounds and timings of one replica-SQ process. Every queue is bounded; what overflows is counted.</summary>
public sealed record ReplicaSqHostOptions
{
    /// <summary>Executions' outputs waiting for the pump (<see cref="ExecutionOutputQueue"/>); beyond it the core thread drops them (counted) rather than wait.</summary>
    public int OutboxQueueCapacity { get; init; } = 4_096;

    /// <summary>Frames queued per receiver subscription before the subscriber counts as too slow and is dropped.</summary>
    public int SubscriptionQueueFrames { get; init; } = 1_024;

    /// <summary>Bytes queued per receiver subscription before the subscriber counts as too slow.</summary>
    public long SubscriptionQueueBytes { get; init; } = 64L * 1024 * 1024;

    /// <summary>ACKRES kept per pre-SQ while it is not reading; the oldest go first.</summary>
    public int AckResponseQueue { get; init; } = 8_192;

    /// <summary>Items re-sent at most per retransmission (subscription start or periodic catch-up).</summary>
    public int RetransmitMaxItems { get; init; } = 4_096;

    /// <summary>An unacknowledged item this old is re-sent; also the least time between two re-sends to one receiver.</summary>
    public TimeSpan RetransmitAfter { get; init; } = TimeSpan.FromSeconds(2);

    public TimeSpan RetransmitTick { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>Body bytes per output frame; larger batches are split (same batch number, a MAC each) to stay under gRPC message limits.</summary>
    public int MaxFrameBodyBytes { get; init; } = 2 * 1024 * 1024;

    /// <summary>How far a subscriber's clock may be from ours before its subscription counts as stale or replayed.</summary>
    public TimeSpan SubscriptionFreshness { get; init; } = TimeSpan.FromSeconds(120);

    /// <summary>A stream must carry its subscription within this time or it is closed.</summary>
    public TimeSpan SubscriptionReadTimeout { get; init; } = TimeSpan.FromSeconds(10);

    public int MaxConnections { get; init; } = 1_024;

    /// <summary>
    /// Open API connections from one source (an IPv4 address or an IPv6 /64); beyond it a new connection is closed
    /// before HTTP/2 starts. A receiver and a pre-SQ need one or two each.
    /// </summary>
    public int MaxConnectionsPerSource { get; init; } = 32;
    public int MaxStreamsPerConnection { get; init; } = 64;
    public TimeSpan KeepAliveTimeout { get; init; } = TimeSpan.FromSeconds(130);
    public TimeSpan RequestHeadersTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>Largest request message (a body fetch request is the largest a post-SQ sends).</summary>
    public int MaxRequestBytes { get; init; } = 1024 * 1024;

    /// <summary>
    /// The Kestrel bounds above, for <see cref="KestrelHardening"/>. Its clients are post-SQs and pre-SQs, fewer and better
    /// known than a pre-SQ's senders, so header sizes, data rates and windows stay at Kestrel's defaults.
    /// </summary>
    internal KestrelLimits KestrelLimits => new()
    {
        MaxConnections = MaxConnections,
        KeepAliveTimeout = KeepAliveTimeout,
        RequestHeadersTimeout = RequestHeadersTimeout,
        MaxStreamsPerConnection = MaxStreamsPerConnection,
        MaxMessageBytes = MaxRequestBytes,
        // Subscriptions are long and mostly quiet: pings find dead peers so their slots are freed.
        KeepAlivePingDelay = TimeSpan.FromSeconds(30),
        KeepAlivePingTimeout = TimeSpan.FromSeconds(20),
    };

    public void Validate()
    {
        if (OutboxQueueCapacity < 1 || SubscriptionQueueFrames < 1 || SubscriptionQueueBytes < 1 || AckResponseQueue < 1 || RetransmitMaxItems < 1
            || MaxFrameBodyBytes < 1 || MaxConnections < 1 || MaxConnectionsPerSource < 1 || MaxStreamsPerConnection < 1 || MaxRequestBytes < 1024)
        {
            throw new ArgumentException("replica-SQ queue sizes and limits must be positive");
        }
        if (RetransmitAfter <= TimeSpan.Zero || RetransmitTick <= TimeSpan.Zero || SubscriptionFreshness <= TimeSpan.Zero
            || SubscriptionReadTimeout <= TimeSpan.Zero || KeepAliveTimeout <= TimeSpan.Zero || RequestHeadersTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentException("replica-SQ time limits must be positive");
        }
    }
}
