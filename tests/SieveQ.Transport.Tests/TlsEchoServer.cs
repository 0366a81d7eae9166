using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Transport.Hardening;
using SieveQ.Transport.Tests.Proto;
using SieveQ.Transport.Tls;

namespace SieveQ.Transport.Tests;

/// <summary>The echo method behind the product's hardened listener (<see cref="HardenedWebApplication"/>) on https://, a real TLS 1.3 server on loopback.</summary>
internal sealed class TlsEchoServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private TlsEchoServer(WebApplication app, Uri address, PrefaceDeadline preface, X509Certificate2 certificate)
    {
        _app = app;
        Address = address;
        Preface = preface;
        Certificate = certificate;
        Pin = TlsPin.Of(certificate.PublicKey);
    }

    public Uri Address { get; }
    public PrefaceDeadline Preface { get; }
    public X509Certificate2 Certificate { get; }
    public TlsPin Pin { get; }

    public static async Task<TlsEchoServer> StartAsync(X509Certificate2? certificate = null, TimeSpan? deadline = null)
    {
        certificate ??= TlsServerCertificate.CreateEphemeral("echo");
        var port = FreePort();
        var address = new Uri($"https://127.0.0.1:{port}");
        // Tests not about the deadline get one that a loaded CI machine's first TLS handshake (JIT included) meets.
        var preface = new PrefaceDeadline(deadline ?? TimeSpan.FromSeconds(10));
        var limits = new KestrelLimits
        {
            MaxConnections = 64,
            KeepAliveTimeout = TimeSpan.FromMinutes(1),
            RequestHeadersTimeout = TimeSpan.FromSeconds(5),
            MaxStreamsPerConnection = 16,
            MaxMessageBytes = 64 * 1024,
            KeepAlivePingDelay = TimeSpan.FromSeconds(30),
            KeepAlivePingTimeout = TimeSpan.FromSeconds(10),
        };
        var web = HardenedWebApplication.CreateBuilder(typeof(TlsEchoServer).Assembly, NullLoggerFactory.Instance, address, limits,
            new SourceConnectionLimiter(16), preface, certificate);
        var app = web.Build();
        app.MapGrpcMethod<EchoMessage, EchoMessage>("sieveq.test.v1.Echo", "Stream", EchoMessage.Parser, async call =>
        {
            await foreach (var m in call.ReadAllAsync())
            {
                await call.WriteAsync(m);
            }
        }, 64 * 1024);
        await app.StartAsync();
        return new TlsEchoServer(app, address, preface, certificate);
    }

    private static int FreePort()
    {
        using var probe = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        probe.Start();
        return ((System.Net.IPEndPoint)probe.LocalEndpoint).Port;
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
        Certificate.Dispose();
    }
}
