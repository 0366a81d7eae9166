using System.Collections.Concurrent;
using System.Net;
using Google.Protobuf;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using SieveQ.Telemetry.Tests.Otlp;

namespace SieveQ.Telemetry.Tests;

/// <summary>What one export request carried: the exporting service, and a metric or span name with its scope.</summary>
internal sealed record ReceivedSignal(string Service, string Scope, string Name);

/// <summary>
/// An OTLP/HTTP collector for the tests: Kestrel on a loopback port accepting protobuf POSTs at /v1/metrics and
/// /v1/traces, keeping which service sent which metric and span names.
/// </summary>
internal sealed class OtlpReceiver : IAsyncDisposable
{
    private readonly WebApplication _web;

    public ConcurrentBag<ReceivedSignal> Metrics { get; } = [];

    public ConcurrentBag<ReceivedSignal> Spans { get; } = [];

    public int Requests;

    public int Malformed;

    private OtlpReceiver(WebApplication web) => _web = web;

    public Uri Url { get; private set; } = null!;

    public static async Task<OtlpReceiver> StartAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        var web = builder.Build();
        var receiver = new OtlpReceiver(web);
        web.MapPost("/v1/metrics", ctx => receiver.TakeAsync(ctx, ExportMetricsServiceRequest.Parser, receiver.OnMetrics));
        web.MapPost("/v1/traces", ctx => receiver.TakeAsync(ctx, ExportTraceServiceRequest.Parser, receiver.OnSpans));
        await web.StartAsync();
        receiver.Url = new Uri(web.Urls.First());
        return receiver;
    }

    private async Task TakeAsync<T>(HttpContext ctx, MessageParser<T> parser, Action<T> take)
        where T : IMessage<T>
    {
        Interlocked.Increment(ref Requests);
        using var body = new MemoryStream();
        await ctx.Request.Body.CopyToAsync(body);
        if (ctx.Request.ContentType != "application/x-protobuf")
        {
            Interlocked.Increment(ref Malformed);
            ctx.Response.StatusCode = StatusCodes.Status415UnsupportedMediaType;
            return;
        }
        try
        {
            take(parser.ParseFrom(body.ToArray()));
        }
        catch (InvalidProtocolBufferException)
        {
            Interlocked.Increment(ref Malformed);
            ctx.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }
        // An empty ExportMetricsServiceResponse / ExportTraceServiceResponse.
        ctx.Response.ContentType = "application/x-protobuf";
        ctx.Response.StatusCode = StatusCodes.Status200OK;
    }

    private void OnMetrics(ExportMetricsServiceRequest request)
    {
        foreach (var r in request.ResourceMetrics)
        {
            var service = ServiceName(r.Resource);
            foreach (var s in r.ScopeMetrics)
            {
                foreach (var m in s.Metrics)
                {
                    Metrics.Add(new(service, s.Scope?.Name ?? "", m.Name));
                }
            }
        }
    }

    private void OnSpans(ExportTraceServiceRequest request)
    {
        foreach (var r in request.ResourceSpans)
        {
            var service = ServiceName(r.Resource);
            foreach (var s in r.ScopeSpans)
            {
                foreach (var span in s.Spans)
                {
                    Spans.Add(new(service, s.Scope?.Name ?? "", span.Name));
                }
            }
        }
    }

    private static string ServiceName(Resource? resource) =>
        resource?.Attributes.FirstOrDefault(a => a.Key == "service.name")?.Value?.StringValue ?? "";

    public async ValueTask DisposeAsync() => await _web.DisposeAsync();
}
