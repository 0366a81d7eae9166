using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using OpenTelemetry.Metrics;

namespace SieveQ.Telemetry;

/// <summary>
/// The Prometheus scrape endpoint: its own small Kestrel on a loopback port, apart from the component's
/// gRPC port (which on a pre-SQ faces the senders), serving GET /metrics from the host's meter provider and
/// nothing else. Bounded like every listener here: a few connections, short header and keep-alive times, no
/// request bodies.
/// </summary>
internal sealed class ScrapeListener(TelemetryOptions options, MeterProvider meters, ILoggerFactory logs) : IHostedService, IAsyncDisposable
{
    /// <summary>Prometheus and one person with curl; more is someone else.</summary>
    public const int MaxConnections = 8;

    private WebApplication? _web;

    /// <summary>The URL scraped, once started (the port chosen when 0 was asked for).</summary>
    public Uri? Url { get; private set; }

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        var listen = options.ScrapeListen!;
        var web = WebApplication.CreateSlimBuilder(new WebApplicationOptions { ApplicationName = "SieveQ.Telemetry" });
        web.Logging.ClearProviders();
        web.Services.AddSingleton(logs);
        web.Services.Configure<HostOptions>(h => h.ShutdownTimeout = TimeSpan.FromSeconds(2));
        web.WebHost.ConfigureKestrel(k =>
        {
            k.AddServerHeader = false;
            k.Limits.MaxConcurrentConnections = MaxConnections;
            k.Limits.MaxRequestBodySize = 0;
            k.Limits.MaxRequestHeadersTotalSize = 8 * 1024;
            k.Limits.MaxRequestLineSize = 1024;
            k.Limits.RequestHeadersTimeout = TimeSpan.FromSeconds(5);
            k.Limits.KeepAliveTimeout = TimeSpan.FromSeconds(30);
            k.Listen(listen, l => l.Protocols = HttpProtocols.Http1);
        });
        var app = web.Build();
        app.MapPrometheusScrapingEndpoint(TelemetryOptions.ScrapePath, meters, configureBranchedPipeline: null, optionsName: null);
        try
        {
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (IOException e)
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw new TelemetryStartException($"--metrics-listen {listen}: cannot listen: {e.Message}", e);
        }
        _web = app;
        var bound = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()?.Addresses.FirstOrDefault();
        Url = new Uri(new Uri(bound ?? $"http://{listen}"), TelemetryOptions.ScrapePath);
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_web is { } web)
        {
            await web.StopAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_web is { } web)
        {
            _web = null;
            await web.DisposeAsync().ConfigureAwait(false);
        }
    }
}
