using Microsoft.AspNetCore.Server.Kestrel.Core;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.PreSq;
using SieveQ.Transport.Hardening;

namespace SieveQ.PreSq;

/// <summary>
/// Every bound of a pre-SQ process: Kestrel's defences against connection and Slowloris-style
/// exhaustion, the queues between the network and the event loop, and the filter's own tunables.
/// Defaults suit one pre-SQ on a small machine in front of a few thousand senders.
/// </summary>
public sealed record PreSqHostOptions
{
    /// <summary>Frame body (1 MiB of DATA at most) plus headers, Merkle path, MAC and protobuf envelope.</summary>
    public const int DefaultMaxMessageBytes = EnvelopeLimits.MaxDataBytes + 16 * 1024;

    // --- connections -------------------------------------------------------------------------

    /// <summary>Open TCP connections in total; beyond it Kestrel closes new ones at once.</summary>
    public long MaxConnections { get; init; } = 4_096;

    /// <summary>
    /// Open connections from one source (an IPv4 address or an IPv6 /64); beyond it a new connection is
    /// closed before HTTP/2 starts. One host needs one or two (an agent multiplexes its senders on one).
    /// </summary>
    public int MaxConnectionsPerSource { get; init; } = 32;

    /// <summary>A connection with no open stream is closed after this long.</summary>
    public TimeSpan KeepAliveTimeout { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>
    /// Time a new connection has to send its first bytes (<see cref="PrefaceDeadline"/>; Kestrel would wait
    /// for the HTTP/2 preface for the whole keep-alive timeout) and a request to complete its headers (Kestrel).
    /// </summary>
    public TimeSpan RequestHeadersTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Kestrel's minimum request body rate, for requests that are not gRPC calls. The gRPC mapping lifts it for every
    /// method (a stream may rightly be quiet); the short calls are bounded by <see cref="UnaryRequestTimeout"/>
    /// instead, the Exchange stream by <see cref="UnboundStreamTimeout"/>.
    /// </summary>
    public double MinRequestBodyBytesPerSecond { get; init; } = 1_024;

    public TimeSpan MinDataRateGracePeriod { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Time the short calls (Acknowledge, Health, rule-set and administrator commands) have from their start to deliver
    /// their one request; a trickled one is ended (DEADLINE_EXCEEDED, counted as grpc_request_deadline_expired).
    /// </summary>
    public TimeSpan UnaryRequestTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>Minimum rate at which a client must read what is written to it, or its connection is closed.</summary>
    public double MinResponseBytesPerSecond { get; init; } = 1_024;

    /// <summary>An Exchange stream that has not delivered one frame passing every check by then is ended.</summary>
    public TimeSpan UnboundStreamTimeout { get; init; } = TimeSpan.FromSeconds(30);

    // --- HTTP/2 ------------------------------------------------------------------------------

    public int MaxStreamsPerConnection { get; init; } = 32;

    public int MaxRequestHeaderFieldBytes { get; init; } = 8 * 1024;

    public int MaxRequestHeadersTotalBytes { get; init; } = 16 * 1024;

    public int MaxRequestHeaderCount { get; init; } = 32;

    /// <summary>Bytes one connection may have in flight towards us: two full frames, so one stream cannot starve the others.</summary>
    public int InitialConnectionWindowBytes { get; init; } = 2 * 1024 * 1024 + 128 * 1024;

    public int InitialStreamWindowBytes { get; init; } = 1024 * 1024 + 64 * 1024;

    /// <summary>Pings an idle connection after this long, and drops it when the ping is not answered in time: finds dead peers of idle streams.</summary>
    public TimeSpan KeepAlivePingDelay { get; init; } = TimeSpan.FromSeconds(30);

    public TimeSpan KeepAlivePingTimeout { get; init; } = TimeSpan.FromSeconds(20);

    /// <summary>Largest gRPC message accepted on any method.</summary>
    public int MaxMessageBytes { get; init; } = DefaultMaxMessageBytes;

    /// <summary>The Kestrel bounds above, for <see cref="KestrelHardening"/>: every one a pre-SQ's senders could exhaust is set.</summary>
    internal KestrelLimits KestrelLimits => new()
    {
        MaxConnections = MaxConnections,
        KeepAliveTimeout = KeepAliveTimeout,
        RequestHeadersTimeout = RequestHeadersTimeout,
        MaxStreamsPerConnection = MaxStreamsPerConnection,
        // Exchange lifts it for itself.
        MaxMessageBytes = MaxMessageBytes,
        KeepAlivePingDelay = KeepAlivePingDelay,
        KeepAlivePingTimeout = KeepAlivePingTimeout,
        MaxRequestHeadersTotalBytes = MaxRequestHeadersTotalBytes,
        MaxRequestHeaderCount = MaxRequestHeaderCount,
        MaxRequestHeaderFieldBytes = MaxRequestHeaderFieldBytes,
        MinRequestBodyDataRate = new MinDataRate(MinRequestBodyBytesPerSecond, MinDataRateGracePeriod),
        MinResponseDataRate = new MinDataRate(MinResponseBytesPerSecond, MinDataRateGracePeriod),
        InitialConnectionWindowBytes = InitialConnectionWindowBytes,
        InitialStreamWindowBytes = InitialStreamWindowBytes,
    };

    // --- queues ------------------------------------------------------------------------------

    /// <summary>
    /// Frames and acknowledgements waiting for the event loop. When the loop stalls on ordering
    /// back-pressure this fills, and further input is shed (counted): senders retransmit.
    /// </summary>
    public int InboundQueueItems { get; init; } = 16_384;

    /// <summary>Ordering requests submitted and not yet answered by f+1 replicas.</summary>
    public int MaxOrderingInFlight { get; init; } = 64;

    /// <summary>ACKRES waiting to be written to one sender's stream; more are dropped (the sender asks again).</summary>
    public int StreamQueueEvents { get; init; } = 1_024;

    // --- load, relay, filter -----------------------------------------------------------------

    /// <summary>Frames per second this pre-SQ can take; WARNREQ is sent from <see cref="WarnAtPermille"/> of it.</summary>
    public double CapacityPerSecond { get; init; } = 20_000;

    public int WarnAtPermille { get; init; } = 800;

    public TimeSpan RelayBackoffMin { get; init; } = TimeSpan.FromMilliseconds(100);

    public TimeSpan RelayBackoffMax { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// An ordering request unanswered this long makes the pre-SQ report itself unhealthy ("not ordering"): well
    /// above a regency change, so one change is not reported, and far below the minutes a silent stall lasted.
    /// </summary>
    public TimeSpan UnansweredAfter { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>How often the pre-SQ asks the replicas (through the ordering) whether senders were enrolled or revoked.</summary>
    public TimeSpan EnrolmentPollInterval { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>Window, grant and batching of the pure filter.</summary>
    public PreSqOptions Filter { get; init; } = new();

    public void Validate()
    {
        static void Positive(double v, string name)
        {
            if (!(v > 0))
            {
                throw new ArgumentOutOfRangeException(name, v, "must be positive");
            }
        }
        Positive(MaxConnections, nameof(MaxConnections));
        Positive(MaxConnectionsPerSource, nameof(MaxConnectionsPerSource));
        Positive(KeepAliveTimeout.TotalMilliseconds, nameof(KeepAliveTimeout));
        Positive(EnrolmentPollInterval.TotalMilliseconds, nameof(EnrolmentPollInterval));
        Positive(RequestHeadersTimeout.TotalMilliseconds, nameof(RequestHeadersTimeout));
        Positive(MinRequestBodyBytesPerSecond, nameof(MinRequestBodyBytesPerSecond));
        Positive(MinResponseBytesPerSecond, nameof(MinResponseBytesPerSecond));
        if (MinDataRateGracePeriod <= TimeSpan.FromSeconds(1))
        {
            // Kestrel checks rates once a second and refuses a shorter grace.
            throw new ArgumentOutOfRangeException(nameof(MinDataRateGracePeriod), MinDataRateGracePeriod, "must be above one second");
        }
        Positive(UnboundStreamTimeout.TotalMilliseconds, nameof(UnboundStreamTimeout));
        Positive(UnaryRequestTimeout.TotalMilliseconds, nameof(UnaryRequestTimeout));
        Positive(MaxStreamsPerConnection, nameof(MaxStreamsPerConnection));
        Positive(MaxRequestHeaderFieldBytes, nameof(MaxRequestHeaderFieldBytes));
        Positive(MaxRequestHeadersTotalBytes, nameof(MaxRequestHeadersTotalBytes));
        Positive(MaxRequestHeaderCount, nameof(MaxRequestHeaderCount));
        Positive(InboundQueueItems, nameof(InboundQueueItems));
        Positive(MaxOrderingInFlight, nameof(MaxOrderingInFlight));
        Positive(StreamQueueEvents, nameof(StreamQueueEvents));
        Positive(CapacityPerSecond, nameof(CapacityPerSecond));
        Positive(RelayBackoffMin.TotalMilliseconds, nameof(RelayBackoffMin));
        Positive(UnansweredAfter.TotalMilliseconds, nameof(UnansweredAfter));
        if (InitialConnectionWindowBytes < 65_535 || InitialStreamWindowBytes < 65_535)
        {
            throw new ArgumentOutOfRangeException(nameof(InitialConnectionWindowBytes), "HTTP/2 windows are at least 65,535 bytes");
        }
        if (MaxMessageBytes < 1024)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxMessageBytes), "too small for a sender frame");
        }
        if (MaxMessageBytes > DefaultMaxMessageBytes)
        {
            // A frame body above what the ordering layer is sized for would be accepted here and never ordered.
            throw new ArgumentOutOfRangeException(nameof(MaxMessageBytes), MaxMessageBytes, $"above the largest frame the sieve orders ({DefaultMaxMessageBytes})");
        }
        if (RelayBackoffMax < RelayBackoffMin)
        {
            throw new ArgumentOutOfRangeException(nameof(RelayBackoffMax), "below the minimum back-off");
        }
        ArgumentNullException.ThrowIfNull(Filter);
    }
}
