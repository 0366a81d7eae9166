using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using SieveQ.Deployment;
using SieveQ.Transport;
using SieveQ.Transport.Hardening;

namespace SieveQ.ReplicaSq;

/// <summary>
/// Kestrel for the replica-SQ's API: cleartext HTTP/2 only (everything that flows is MACed or signed;
/// confidentiality is not a goal), with connections, streams and slow headers bounded. Its clients are
/// post-SQs and pre-SQs, fewer and better known than a pre-SQ's senders, so the limits are modest.
/// </summary>
internal static class KestrelSetup
{
    public static void Apply(KestrelServerOptions kestrel, ReplicaSqHostOptions o)
    {
        kestrel.AddServerHeader = false;
        var limits = kestrel.Limits;
        limits.MaxConcurrentConnections = o.MaxConnections;
        limits.MaxConcurrentUpgradedConnections = 0;
        limits.KeepAliveTimeout = o.KeepAliveTimeout;
        limits.RequestHeadersTimeout = o.RequestHeadersTimeout;
        limits.MaxRequestBodySize = o.MaxRequestBytes + GrpcFraming.HeaderSize;
        limits.Http2.MaxStreamsPerConnection = o.MaxStreamsPerConnection;
        // Subscriptions are long and mostly quiet: pings find dead peers so their slots are freed.
        limits.Http2.KeepAlivePingDelay = TimeSpan.FromSeconds(30);
        limits.Http2.KeepAlivePingTimeout = TimeSpan.FromSeconds(20);
    }

    /// <summary>
    /// The pre-SQ's per-source connection limit and preface deadline apply here too: its clients are few, but
    /// the port is reachable by anyone who can reach the host, and a silent or piled-up connection costs the
    /// same here as there.
    /// </summary>
    public static void Listen(KestrelServerOptions kestrel, Uri url, SourceConnectionLimiter limiter, PrefaceDeadline preface)
    {
        if (url.Scheme != Uri.UriSchemeHttp)
        {
            throw new DeploymentException($"replica-SQ URL {url}: only cleartext http:// is served (outputs are MACed; confidentiality is not a goal)");
        }
        void Configure(ListenOptions listen)
        {
            listen.Protocols = HttpProtocols.Http2;
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
