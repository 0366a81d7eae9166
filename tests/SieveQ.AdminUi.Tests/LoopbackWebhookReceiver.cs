using System.Collections.Concurrent;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace SieveQ.AdminUi.Tests;

/// <summary>One request a <see cref="LoopbackWebhookReceiver"/> got: its headers and the exact body bytes.</summary>
internal sealed record WebhookRequest(string Method, string Path, IReadOnlyDictionary<string, string> Headers, byte[] Body)
{
    public string? Header(string name) => Headers.TryGetValue(name.ToLowerInvariant(), out var v) ? v : null;
}

/// <summary>
/// A real HTTP(S) server (Kestrel) on a free loopback port that records every POST and answers <see cref="Status"/>;
/// with <see cref="Hang"/> it answers nothing until the test ends, a receiver that accepted the connection and died.
/// </summary>
internal sealed class LoopbackWebhookReceiver : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly CancellationTokenSource _stopping = new();

    public ConcurrentQueue<WebhookRequest> Requests { get; } = new();

    /// <summary>Requests answered (a hung one is not).</summary>
    public int Answered => Volatile.Read(ref _answered);
    private int _answered;

    public volatile int Status = 200;
    public volatile bool Hang;

    public string Url { get; private set; } = "";

    private LoopbackWebhookReceiver(X509Certificate2? certificate)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseKestrelHttpsConfiguration();
        builder.WebHost.UseKestrel(k => k.Listen(IPAddress.Loopback, 0, l =>
        {
            if (certificate is not null)
            {
                l.UseHttps(certificate);
            }
        }));
        _app = builder.Build();
        _app.MapPost("/hook", async context =>
        {
            using var body = new MemoryStream();
            await context.Request.Body.CopyToAsync(body, context.RequestAborted);
            Requests.Enqueue(new WebhookRequest(context.Request.Method, context.Request.Path,
                context.Request.Headers.ToDictionary(h => h.Key.ToLowerInvariant(), h => h.Value.ToString()), body.ToArray()));
            if (Hang)
            {
                using var both = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, _stopping.Token);
                await Task.Delay(Timeout.Infinite, both.Token).ContinueWith(_ => { }, TaskScheduler.Default);
                return;
            }
            context.Response.StatusCode = Status;
            await context.Response.CompleteAsync();
            Interlocked.Increment(ref _answered);
        });
    }

    /// <param name="certificate">Serve https:// with it; none: http://.</param>
    public static async Task<LoopbackWebhookReceiver> StartAsync(X509Certificate2? certificate = null)
    {
        var receiver = new LoopbackWebhookReceiver(certificate);
        await receiver._app.StartAsync();
        var address = receiver._app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        receiver.Url = address + "/hook";
        return receiver;
    }

    /// <summary>Waits (bounded: a wait for a real server, not a timing goal) until <paramref name="count"/> requests arrived.</summary>
    public async Task<WebhookRequest[]> WaitForAsync(int count)
    {
        await Eventually.TrueAsync(() => Requests.Count >= count, $"{count} webhook request(s); got {Requests.Count}");
        return [.. Requests];
    }

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync();
        await _app.StopAsync();
        await _app.DisposeAsync();
        _stopping.Dispose();
    }
}

/// <summary>Self-signed server certificates for loopback TLS receivers.</summary>
internal static class LoopbackCertificate
{
    public static X509Certificate2 Create()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=loopback receiver", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        using var ephemeral = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        // Through PKCS#12 so the key is one the TLS stack can use for a server.
        return X509CertificateLoader.LoadPkcs12(ephemeral.Export(X509ContentType.Pkcs12), null);
    }
}

/// <summary>Polls a condition until it holds, for at most 60 s: the bound on waiting for real servers on a loaded machine.</summary>
internal static class Eventually
{
    public static async Task TrueAsync(Func<bool> condition, string what, Action? step = null)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"waited 60 s for {what}");
            }
            step?.Invoke();
            await Task.Delay(20);
        }
    }
}
