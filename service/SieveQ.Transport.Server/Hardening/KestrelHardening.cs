using System.Net;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace SieveQ.Transport.Hardening;

/// <summary>
/// Kestrel set up for an endpoint reachable by hostile clients (Slowloris and its kin try to exhaust
/// connections, header buffers or stream slots by being slow rather than fast): HTTP/2 only, over TLS 1.3 or cleartext,
/// every resource a client can hold bounded by <see cref="KestrelLimits"/>, and the per-source connection
/// limit and preface deadline in front of HTTP/2. Both the pre-SQ and the replica-SQ serve through it.
/// </summary>
public static class KestrelHardening
{
    public static void Apply(KestrelServerOptions kestrel, KestrelLimits bounds)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        ArgumentNullException.ThrowIfNull(bounds);
        kestrel.AddServerHeader = false;
        var limits = kestrel.Limits;
        limits.MaxConcurrentConnections = bounds.MaxConnections;
        limits.MaxConcurrentUpgradedConnections = 0;
        limits.KeepAliveTimeout = bounds.KeepAliveTimeout;
        limits.RequestHeadersTimeout = bounds.RequestHeadersTimeout;
        // For the unary calls; a streaming method lifts it for itself (an endless stream has no total size).
        limits.MaxRequestBodySize = bounds.MaxMessageBytes + GrpcFraming.HeaderSize;
        // An optional bound not given keeps Kestrel's default.
        limits.MaxRequestHeadersTotalSize = bounds.MaxRequestHeadersTotalBytes ?? limits.MaxRequestHeadersTotalSize;
        limits.MaxRequestHeaderCount = bounds.MaxRequestHeaderCount ?? limits.MaxRequestHeaderCount;
        limits.MinRequestBodyDataRate = bounds.MinRequestBodyDataRate ?? limits.MinRequestBodyDataRate;
        limits.MinResponseDataRate = bounds.MinResponseDataRate ?? limits.MinResponseDataRate;

        var h2 = limits.Http2;
        h2.MaxStreamsPerConnection = bounds.MaxStreamsPerConnection;
        h2.MaxRequestHeaderFieldSize = bounds.MaxRequestHeaderFieldBytes ?? h2.MaxRequestHeaderFieldSize;
        h2.InitialConnectionWindowSize = bounds.InitialConnectionWindowBytes ?? h2.InitialConnectionWindowSize;
        h2.InitialStreamWindowSize = bounds.InitialStreamWindowBytes ?? h2.InitialStreamWindowSize;
        h2.KeepAlivePingDelay = bounds.KeepAlivePingDelay;
        h2.KeepAlivePingTimeout = bounds.KeepAlivePingTimeout;
    }

    /// <summary>
    /// Listens on <paramref name="url"/>, HTTP/2 only (no HTTP/1.1 to downgrade to): over TLS 1.3 with
    /// <paramref name="certificate"/> for https://, with prior knowledge for http://. Over-limit sources are refused
    /// before TLS and before the preface deadline starts, so a refusal costs neither a handshake nor a timer; a
    /// client that does not finish its TLS handshake within the preface deadline is cut as a silent h2c one is.
    /// </summary>
    /// <exception cref="ArgumentException">The scheme is neither, or https:// comes without a certificate.</exception>
    public static void Listen(KestrelServerOptions kestrel, Uri url, SourceConnectionLimiter limiter, PrefaceDeadline preface, X509Certificate2? certificate = null)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        ArgumentNullException.ThrowIfNull(url);
        ArgumentNullException.ThrowIfNull(limiter);
        ArgumentNullException.ThrowIfNull(preface);
        if (url.Scheme == Uri.UriSchemeHttps && certificate is null)
        {
            throw new ArgumentException($"{url}: https:// needs the component's TLS certificate", nameof(url));
        }
        if (url.Scheme != Uri.UriSchemeHttps && url.Scheme != Uri.UriSchemeHttp)
        {
            throw new ArgumentException($"{url}: only https:// (TLS 1.3) and http:// (cleartext HTTP/2) are served", nameof(url));
        }
        var tls = url.Scheme == Uri.UriSchemeHttps ? certificate : null;
        void Configure(ListenOptions listen)
        {
            listen.Protocols = HttpProtocols.Http2;
            listen.Use(limiter.Wrap);
            if (tls is not null)
            {
                listen.Use(preface.WrapHandshake);
                listen.UseHttps(new HttpsConnectionAdapterOptions
                {
                    ServerCertificate = tls,
                    SslProtocols = SslProtocols.Tls13,
                    ClientCertificateMode = ClientCertificateMode.NoCertificate,
                    // A backstop only: WrapHandshake cuts (and counts) a slow handshake at the deadline itself.
                    HandshakeTimeout = preface.Deadline * 2,
                });
            }
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
