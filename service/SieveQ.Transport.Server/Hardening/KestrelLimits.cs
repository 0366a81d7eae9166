using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace SieveQ.Transport.Hardening;

/// <summary>
/// The bounds <see cref="KestrelHardening"/> puts on a gRPC endpoint: every resource an unauthenticated
/// client can hold, in count and in time. The optional ones stay at Kestrel's defaults when null, for an
/// endpoint whose clients are few and known (the replica-SQ's) and needs no tighter bound.
/// </summary>
public sealed record KestrelLimits
{
    /// <summary>Open connections in total; beyond it Kestrel closes new ones at once.</summary>
    public required long MaxConnections { get; init; }

    /// <summary>A connection with no open stream is closed after this long.</summary>
    public required TimeSpan KeepAliveTimeout { get; init; }

    /// <summary>Time a request has to complete its headers (the preface deadline of a new connection is <see cref="PrefaceDeadline"/>'s).</summary>
    public required TimeSpan RequestHeadersTimeout { get; init; }

    public required int MaxStreamsPerConnection { get; init; }

    /// <summary>Largest gRPC message of a unary call; the request body may hold one, with its framing.</summary>
    public required int MaxMessageBytes { get; init; }

    /// <summary>Pings an idle connection after this long and drops it when the ping is not answered in <see cref="KeepAlivePingTimeout"/>: finds dead peers of quiet streams.</summary>
    public required TimeSpan KeepAlivePingDelay { get; init; }

    public required TimeSpan KeepAlivePingTimeout { get; init; }

    public int? MaxRequestHeadersTotalBytes { get; init; }

    public int? MaxRequestHeaderCount { get; init; }

    public int? MaxRequestHeaderFieldBytes { get; init; }

    /// <summary>A trickled request body is cut off below this rate (after its grace period).</summary>
    public MinDataRate? MinRequestBodyDataRate { get; init; }

    /// <summary>A client that reads responses slower than this has its connection closed.</summary>
    public MinDataRate? MinResponseDataRate { get; init; }

    public int? InitialConnectionWindowBytes { get; init; }

    public int? InitialStreamWindowBytes { get; init; }
}
