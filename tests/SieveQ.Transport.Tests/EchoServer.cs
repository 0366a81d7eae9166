using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using SieveQ.Transport.Tests.Proto;

namespace SieveQ.Transport.Tests;

/// <summary>A real Kestrel server on loopback (and optionally a Unix socket) with an echo method.</summary>
internal sealed class EchoServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private EchoServer(WebApplication app, Uri address, string? socketPath)
    {
        _app = app;
        Address = address;
        SocketPath = socketPath;
    }

    public Uri Address { get; }
    public string? SocketPath { get; }

    public static async Task<EchoServer> StartAsync(string? socketPath = null, int maxMessageBytes = 64 * 1024)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.Listen(System.Net.IPAddress.Loopback, 0, o => o.Protocols = HttpProtocols.Http2);
            if (socketPath is not null)
            {
                k.ListenUnixSocket(socketPath, o => o.Protocols = HttpProtocols.Http2);
            }
        });
        var app = builder.Build();
        app.MapGrpcMethod<EchoMessage, EchoMessage>("sieveq.test.v1.Echo", "Stream", EchoMessage.Parser, async call =>
        {
            await foreach (var m in call.ReadAllAsync())
            {
                if (m.FailWith.Length > 0)
                {
                    throw new GrpcCallException(GrpcStatusCode.PermissionDenied, m.FailWith);
                }
                await call.WriteAsync(m, flush: false);
                if (m.Seq % 64 == 0)
                {
                    await call.FlushAsync();
                }
            }
        }, maxMessageBytes);
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses
            .First(a => a.StartsWith("http://127.0.0.1", StringComparison.Ordinal));
        return new EchoServer(app, new Uri(address), socketPath);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
