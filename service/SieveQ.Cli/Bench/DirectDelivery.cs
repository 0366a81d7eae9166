using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SieveQ.Transport.Tls;
using System.Security.Authentication;
using Microsoft.AspNetCore.Server.Kestrel.Https;

namespace SieveQ.Cli.Bench;

/// <summary>
/// The baseline: the sender streams its messages straight to the receiver over the same gRPC
/// transport (HTTP/2 on loopback, Kestrel and HttpClient), with no SieveQ in between.
/// </summary>
internal sealed class DirectDelivery : IAsyncDisposable
{
    private const string Service = "sieveq.bench.Direct";
    private const string Method = "Deliver";
    private readonly WebApplication _app;
    private readonly GrpcChannel _channel;
    private GrpcDuplexCall<OutgoingMessage, SendProgress>? _call;
    private int _unflushed;

    private DirectDelivery(WebApplication app, Uri address, TlsPin? pin)
    {
        _app = app;
        _channel = GrpcChannel.ForAddress(address, pin);
    }

    /// <param name="tls">TLS 1.3 with a pinned key, as the sieve's links; false: cleartext HTTP/2, as a cleartext sieve.</param>
    public static async Task<DirectDelivery> StartAsync(DeliveryMeter meter, bool tls, CancellationToken ct)
    {
        var port = PortPlan.FindFreeBlock(1);
        var certificate = tls ? TlsServerCertificate.CreateEphemeral("direct") : null;
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, port, l =>
        {
            l.Protocols = HttpProtocols.Http2;
            if (certificate is not null)
            {
                l.UseHttps(new HttpsConnectionAdapterOptions { ServerCertificate = certificate, SslProtocols = SslProtocols.Tls13 });
            }
        }));
        var app = builder.Build();
        app.MapGrpcMethod<OutgoingMessage, SendProgress>(Service, Method, OutgoingMessage.Parser, async call =>
        {
            await foreach (var m in call.ReadAllAsync(call.CallAborted).ConfigureAwait(false))
            {
                meter.Record(m.Data.Span);
            }
        });
        await app.StartAsync(ct).ConfigureAwait(false);
        var d = new DirectDelivery(app, new Uri($"{(tls ? "https" : "http")}://127.0.0.1:{port}"), certificate is null ? null : TlsPin.Of(certificate.PublicKey));
        d._call = await d._channel.StartCallAsync<OutgoingMessage, SendProgress>(Service, Method, SendProgress.Parser, ct).ConfigureAwait(false);
        return d;
    }

    /// <summary>Writes one message; flushes at once when paced (latency), every 64 messages when flat out (throughput).</summary>
    public async ValueTask SendAsync(ReadOnlyMemory<byte> data, bool flushEach, CancellationToken ct)
    {
        var flush = flushEach || ++_unflushed >= 64;
        if (flush)
        {
            _unflushed = 0;
        }
        await _call!.WriteAsync(new OutgoingMessage { Receiver = 0, Data = Google.Protobuf.ByteString.CopyFrom(data.Span) }, ct, flush).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        if (_call is not null)
        {
            try
            {
                await _call.FlushAsync().ConfigureAwait(false);
                await _call.CompleteRequestAsync().ConfigureAwait(false);
            }
            catch (Exception e) when (e is IOException or GrpcCallException or OperationCanceledException or ObjectDisposedException)
            {
                // the server may already be stopping
            }
            await _call.DisposeAsync().ConfigureAwait(false);
        }
        _channel.Dispose();
        await _app.StopAsync().ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}
