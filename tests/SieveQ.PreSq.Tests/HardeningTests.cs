using System.Net;
using System.Net.Sockets;
using SieveQ.Transport;

namespace SieveQ.PreSq.Tests;

/// <summary>Slowloris-style clients against the hardened Kestrel endpoint, over raw TCP.</summary>
[Collection(PreSqCollection.Name)]
public sealed class HardeningTests(PreSqTestBed bed)
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);

    /// <summary>HTTP/2 client connection preface followed by an empty SETTINGS frame.</summary>
    private static readonly byte[] Preface = [.. "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8, 0, 0, 0, 4, 0, 0, 0, 0, 0];

    private PreSqHost Host => bed.Host;

    [Fact]
    public async Task A_connection_beyond_the_per_source_limit_is_closed_at_once()
    {
        // Connections of earlier tests must be gone first: the limit counts every connection from loopback.
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => Host.ConnectionLimiter.OpenFrom(IPAddress.Loopback) == 0, Generous));
        var limit = PreSqTestBed.Options.MaxConnectionsPerSource;
        var refusedBefore = Host.ConnectionLimiter.Refused;
        var sockets = new List<Socket>();
        var streams = new List<Stream>();
        try
        {
            for (var i = 0; i < limit; i++)
            {
                var s = await ConnectAsync();
                sockets.Add(s);
                var h2 = await StartHttp2Async(s);
                streams.Add(h2);
                Assert.True(await ReadsSomethingAsync(h2), $"connection {i + 1} of {limit} was not served");
            }
            var closed = false;
            try
            {
                var extra = await ConnectAsync();
                sockets.Add(extra);
                streams.Add(await StartHttp2Async(extra));
                closed = await IsClosedByServerAsync(extra, Generous);
            }
            catch (Exception e) when (e is SocketException or IOException or System.Security.Authentication.AuthenticationException)
            {
                // reset before the connect, the TLS handshake or the preface completed on our side: refused, as expected
                closed = true;
            }
            Assert.True(closed, "the connection over the limit was served");
            Assert.Equal(refusedBefore + 1, Host.ConnectionLimiter.Refused);
        }
        finally
        {
            foreach (var h2 in streams)
            {
                await h2.DisposeAsync();
            }
            foreach (var s in sockets)
            {
                s.Dispose();
            }
        }
        // The slots come back when the connections close.
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => Host.ConnectionLimiter.OpenFrom(IPAddress.Loopback) == 0, Generous));
    }

    [Fact]
    public async Task A_client_that_connects_and_sends_nothing_is_disconnected_by_the_headers_timeout()
    {
        var before = Host.Metrics.Snapshot()["connections_closed_silent"];
        using var idle = await ConnectAsync();
        Assert.True(await IsClosedByServerAsync(idle, Generous), "the silent connection was kept open");
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => Host.Metrics.Snapshot()["connections_closed_silent"] == before + 1, Generous));
    }

    [Fact]
    public async Task An_exchange_stream_that_never_authenticates_is_ended()
    {
        var before = Host.Metrics.StreamsUnboundTimeout;
        await using var session = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        // Garbage that fails parsing keeps nothing bound; the stream is ended after UnboundStreamTimeout.
        await session.SendAsync([0x08, 1, 2, 3]);
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => session.Ended is not null, Generous), "unauthenticated stream kept open");
        var e = Assert.IsType<GrpcCallException>(session.Ended);
        Assert.Equal(GrpcStatusCode.PermissionDenied, e.Status);
        Assert.Equal(before + 1, Host.Metrics.StreamsUnboundTimeout);
    }

    [Fact]
    public async Task A_bound_exchange_stream_outlives_the_minimum_data_rate_and_the_unary_body_limit()
    {
        using var s = new TestSender(bed.Deployment.Context, 8, bed.PreSqId);
        await using var session = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        await session.SendAsync(s.Frame(1));
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(8).Count == 1, Generous));

        // Idle for longer than the minimum-rate grace period: a unary body this slow would be cut off.
        await Task.Delay(PreSqTestBed.Options.MinDataRateGracePeriod * 2);
        Assert.Null(session.Ended);

        // More bytes on one stream than a unary call may carry in total.
        var big = new string('x', 100 * 1024);
        var frames = Enumerable.Range(2, 12).Select(i => s.Frame(i, big)).ToArray();
        Assert.True(frames.Sum(f => f.Length) > PreSqTestBed.Options.MaxMessageBytes);
        await session.SendAsync(frames);
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(8).Count == 13, Generous), "frames after the idle period not ordered");
        Assert.Null(session.Ended);
    }

    [Fact]
    public async Task A_health_call_whose_request_trickles_is_ended_by_its_deadline()
    {
        var before = GrpcRequestDeadline.Expired;
        using var handler = new SocketsHttpHandler();
        if (Host.TlsPin is { } pin)
        {
            handler.SslOptions.RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate is not null && pin.Matches(certificate);
        }
        using var client = new HttpClient(handler) { Timeout = Generous * 2 };
        var scheme = Host.TlsPin is null ? "http" : "https";
        using var request = new HttpRequestMessage(HttpMethod.Post, $"{scheme}://127.0.0.1:{Host.Address.Port}/{SieveQ.Protocol.ProtocolNames.PreSqService}/{SieveQ.Protocol.ProtocolNames.Health}")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = new TrickledContent(),
        };
        request.Content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/grpc");
        request.Headers.TryAddWithoutValidation("te", "trailers");
        using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead);
        // The server ends the call (trailers) while our body is still trickling: it did not wait for the rest.
        await response.Content.CopyToAsync(Stream.Null);
        Assert.Equal("4", Assert.Single(response.TrailingHeaders.GetValues("grpc-status")));
        Assert.Contains("did not arrive within", Uri.UnescapeDataString(Assert.Single(response.TrailingHeaders.GetValues("grpc-message"))), StringComparison.Ordinal);
        Assert.True(GrpcRequestDeadline.Expired > before);
        Assert.True(Host.Health().Counters["grpc_request_deadline_expired"] > before);
    }

    /// <summary>A gRPC message header promising 10 bytes, then one byte every two seconds, until the call is ended.</summary>
    private sealed class TrickledContent : HttpContent
    {
        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        {
            await stream.WriteAsync(new byte[] { 0, 0, 0, 0, 10 }, cancellationToken);
            await stream.FlushAsync(cancellationToken);
            try
            {
                for (var i = 0; i < 9; i++)
                {
                    await Task.Delay(TimeSpan.FromSeconds(2), cancellationToken);
                    await stream.WriteAsync(new byte[] { 0x0a }, cancellationToken);
                    await stream.FlushAsync(cancellationToken);
                }
            }
            catch (Exception e) when (e is IOException or OperationCanceledException or HttpRequestException)
            {
                // the server ended the call: what this content is for
            }
        }

        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
            SerializeToStreamAsync(stream, context, CancellationToken.None);

        protected override bool TryComputeLength(out long length)
        {
            length = 0;
            return false;
        }
    }

    private async Task<Socket> ConnectAsync()
    {
        var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            await s.ConnectAsync(new IPEndPoint(IPAddress.Loopback, Host.Address.Port));
            return s;
        }
        catch
        {
            s.Dispose();
            throw;
        }
    }

    /// <summary>The HTTP/2 preface on the connection, inside TLS 1.3 (the pinned key checked) when the pre-SQ serves TLS.</summary>
    private async Task<Stream> StartHttp2Async(Socket s)
    {
        Stream stream = new NetworkStream(s, ownsSocket: false);
        if (Host.TlsPin is { } pin)
        {
            var tls = new System.Net.Security.SslStream(stream, leaveInnerStreamOpen: false, (_, certificate, _, _) => certificate is not null && pin.Matches(certificate));
            stream = tls;
            await tls.AuthenticateAsClientAsync(new System.Net.Security.SslClientAuthenticationOptions
            {
                TargetHost = "pre-sq",
                EnabledSslProtocols = System.Security.Authentication.SslProtocols.Tls13,
                ApplicationProtocols = [System.Net.Security.SslApplicationProtocol.Http2],
            });
        }
        await stream.WriteAsync(Preface);
        await stream.FlushAsync();
        return stream;
    }

    private static async Task<bool> ReadsSomethingAsync(Stream s)
    {
        var buffer = new byte[256];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        try
        {
            return await s.ReadAsync(buffer, timeout.Token) > 0;
        }
        catch (Exception e) when (e is OperationCanceledException or IOException)
        {
            return false;
        }
    }

    /// <summary>Reads (discarding anything the server sends) until it closes or resets the connection, or the bound passes.</summary>
    private static async Task<bool> IsClosedByServerAsync(Socket s, TimeSpan bound)
    {
        var buffer = new byte[4096];
        using var timeout = new CancellationTokenSource(bound);
        try
        {
            while (await s.ReceiveAsync(buffer, timeout.Token) > 0)
            {
            }
            return true;
        }
        catch (SocketException)
        {
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }
}
