using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using SieveQ.Deployment;
using SieveQ.Transport;
using SieveQ.Transport.Hardening;

namespace SieveQ.PreSq;

/// <summary>
/// Kestrel set up for an endpoint facing hostile clients (Slowloris and its kin try to exhaust
/// connections, header buffers or stream slots by being slow rather than fast): cleartext HTTP/2 only,
/// every resource an unauthenticated client can hold bounded in count and in time.
/// </summary>
internal static class KestrelHardening
{
    public static void Apply(KestrelServerOptions kestrel, PreSqHostOptions o)
    {
        kestrel.AddServerHeader = false;
        var limits = kestrel.Limits;
        limits.MaxConcurrentConnections = o.MaxConnections;
        limits.MaxConcurrentUpgradedConnections = 0;
        limits.KeepAliveTimeout = o.KeepAliveTimeout;
        limits.RequestHeadersTimeout = o.RequestHeadersTimeout;
        limits.MaxRequestHeadersTotalSize = o.MaxRequestHeadersTotalBytes;
        limits.MaxRequestHeaderCount = o.MaxRequestHeaderCount;
        // For the unary calls; Exchange lifts it for itself (an endless stream has no total size).
        limits.MaxRequestBodySize = o.MaxMessageBytes + GrpcFraming.HeaderSize;
        limits.MinRequestBodyDataRate = new MinDataRate(o.MinRequestBodyBytesPerSecond, o.MinDataRateGracePeriod);
        limits.MinResponseDataRate = new MinDataRate(o.MinResponseBytesPerSecond, o.MinDataRateGracePeriod);

        var h2 = limits.Http2;
        h2.MaxStreamsPerConnection = o.MaxStreamsPerConnection;
        h2.MaxRequestHeaderFieldSize = o.MaxRequestHeaderFieldBytes;
        h2.InitialConnectionWindowSize = o.InitialConnectionWindowBytes;
        h2.InitialStreamWindowSize = o.InitialStreamWindowBytes;
        h2.KeepAlivePingDelay = o.KeepAlivePingDelay;
        h2.KeepAlivePingTimeout = o.KeepAlivePingTimeout;
    }

    /// <summary>Listens on the pre-SQ's URL from the deployment, HTTP/2 with prior knowledge (no TLS, no HTTP/1.1 to downgrade to).</summary>
    public static void Listen(KestrelServerOptions kestrel, Uri url, SourceConnectionLimiter limiter, PrefaceDeadline preface)
    {
        if (url.Scheme != Uri.UriSchemeHttp)
        {
            throw new DeploymentException($"pre-SQ URL {url}: only cleartext http:// is served (sender frames are MACed; confidentiality is not a goal)");
        }
        void Configure(ListenOptions listen)
        {
            listen.Protocols = HttpProtocols.Http2;
            // Refusals first, so an over-limit source costs no timer.
            listen.Use(limiter.Wrap);
            listen.Use(preface.Wrap);
        }
        var host = url.Host.Trim('[', ']');
        if (IPAddress.TryParse(host, out var ip))
        {
            kestrel.Listen(ip, url.Port, Configure);
        }
        else if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            kestrel.ListenLocalhost(url.Port, Configure);
        }
        else
        {
            kestrel.ListenAnyIP(url.Port, Configure);
        }
    }
}
