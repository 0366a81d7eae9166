using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Google.Protobuf;
using SieveQ.Transport.Tls;

namespace SieveQ.Transport;

/// <summary>
/// A client connection pool to one gRPC server over HTTP/2: TLS 1.3 with the server's key pinned (https://),
/// or cleartext with prior knowledge (http://, or a Unix domain socket). One HTTP/2 connection carries many
/// concurrent calls.
/// </summary>
public sealed class GrpcChannel : IDisposable
{
    private readonly HttpClient _http;
    private volatile string? _refusal;

    private GrpcChannel(Uri baseAddress, SocketsHttpHandler handler, int maxMessageBytes)
    {
        BaseAddress = baseAddress;
        MaxMessageBytes = maxMessageBytes;
        _http = new HttpClient(handler, disposeHandler: true)
        {
            BaseAddress = baseAddress,
            DefaultRequestVersion = HttpVersion.Version20,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Timeout = Timeout.InfiniteTimeSpan,
        };
    }

    public Uri BaseAddress { get; }
    public int MaxMessageBytes { get; }

    /// <summary>A channel to a cleartext (http://) server.</summary>
    public static GrpcChannel ForAddress(Uri address, int maxMessageBytes = GrpcFraming.DefaultMaxMessageBytes) =>
        ForAddress(address, null, maxMessageBytes);

    /// <summary>
    /// A channel to <paramref name="address"/>: for https://, TLS 1.3 only, ALPN h2 only, and the server must present
    /// the key <paramref name="pin"/> names (chain and host name are not checked: there is no CA, the deployment
    /// pins the key). A mismatch fails the call with <see cref="GrpcStatusCode.Unavailable"/> and says both pins.
    /// </summary>
    /// <exception cref="ArgumentException">https:// without a pin, or a pin with http:// (it would not be checked).</exception>
    public static GrpcChannel ForAddress(Uri address, TlsPin? pin, int maxMessageBytes = GrpcFraming.DefaultMaxMessageBytes)
    {
        ArgumentNullException.ThrowIfNull(address);
        if (address.Scheme == Uri.UriSchemeHttps)
        {
            if (pin is null)
            {
                throw new ArgumentException($"{address}: an https:// endpoint needs its TLS pin", nameof(pin));
            }
            var handler = NewHandler();
            var channel = new GrpcChannel(address, handler, maxMessageBytes);
            handler.SslOptions = new SslClientAuthenticationOptions
            {
                EnabledSslProtocols = SslProtocols.Tls13,
                ApplicationProtocols = [SslApplicationProtocol.Http2],
                RemoteCertificateValidationCallback = (_, certificate, _, _) => channel.Accepts(pin, certificate),
            };
            return channel;
        }
        if (address.Scheme != Uri.UriSchemeHttp)
        {
            throw new ArgumentException($"{address}: only https:// and http:// endpoints", nameof(address));
        }
        if (pin is not null)
        {
            throw new ArgumentException($"{address}: a TLS pin is given for a cleartext http:// endpoint; use https://", nameof(pin));
        }
        return new GrpcChannel(address, NewHandler(), maxMessageBytes);
    }

    private bool Accepts(TlsPin pin, System.Security.Cryptography.X509Certificates.X509Certificate? certificate)
    {
        if (certificate is null)
        {
            _refusal = $"{BaseAddress}: the server presented no TLS certificate";
            return false;
        }
        if (pin.Matches(certificate))
        {
            return true;
        }
        _refusal = $"{BaseAddress}: the server's TLS key has pin {TlsPin.Of(certificate)}, not the pinned {pin}; connection refused";
        return false;
    }

    /// <summary>A channel to a server listening on a Unix domain socket (the agent's local endpoint).</summary>
    public static GrpcChannel ForUnixSocket(string socketPath, int maxMessageBytes = GrpcFraming.DefaultMaxMessageBytes)
    {
        var handler = NewHandler();
        handler.ConnectCallback = async (_, ct) =>
        {
            var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            try
            {
                await socket.ConnectAsync(new UnixDomainSocketEndPoint(socketPath), ct).ConfigureAwait(false);
                return new NetworkStream(socket, ownsSocket: true);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        };
        return new GrpcChannel(new Uri("http://localhost"), handler, maxMessageBytes);
    }

    /// <summary>A channel to a server listening on a local named pipe (the agent's endpoint on Windows), HTTP/2 with prior knowledge.</summary>
    public static GrpcChannel ForNamedPipe(string pipeName, int maxMessageBytes = GrpcFraming.DefaultMaxMessageBytes)
    {
        var handler = NewHandler();
        handler.ConnectCallback = async (_, ct) =>
        {
            var pipe = new System.IO.Pipes.NamedPipeClientStream(".", pipeName, System.IO.Pipes.PipeDirection.InOut, System.IO.Pipes.PipeOptions.Asynchronous);
            try
            {
                await pipe.ConnectAsync(ct).ConfigureAwait(false);
                return pipe;
            }
            catch
            {
                await pipe.DisposeAsync().ConfigureAwait(false);
                throw;
            }
        };
        return new GrpcChannel(new Uri("http://localhost"), handler, maxMessageBytes);
    }

    private static SocketsHttpHandler NewHandler() => new()
    {
        EnableMultipleHttp2Connections = true,
        PooledConnectionIdleTimeout = TimeSpan.FromMinutes(5),
        KeepAlivePingDelay = TimeSpan.FromSeconds(20),
        KeepAlivePingTimeout = TimeSpan.FromSeconds(10),
        ConnectTimeout = TimeSpan.FromSeconds(5),
    };

    /// <summary>Starts a call whose request and response streams are both open until each side completes.</summary>
    public async Task<GrpcDuplexCall<TRequest, TResponse>> StartCallAsync<TRequest, TResponse>(string service, string method, MessageParser<TResponse> parser, CancellationToken ct = default)
        where TRequest : class, IMessage<TRequest>
        where TResponse : class, IMessage<TResponse>
    {
        var content = new DuplexRequestContent();
        var request = new HttpRequestMessage(HttpMethod.Post, $"/{service}/{method}")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = content,
        };
        request.Headers.TryAddWithoutValidation("te", "trailers");
        var sending = _http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, ct);
        // The request body stream exists once the connection has started sending.
        var body = await Task.WhenAny(content.Stream, sending).ConfigureAwait(false) == content.Stream
            ? await content.Stream.ConfigureAwait(false)
            : throw await CallFailed(sending, _refusal).ConfigureAwait(false);
        return new GrpcDuplexCall<TRequest, TResponse>(request, content, body, sending, parser, MaxMessageBytes);
    }

    public async Task<TResponse> UnaryAsync<TRequest, TResponse>(string service, string method, TRequest message, MessageParser<TResponse> parser, CancellationToken ct = default)
        where TRequest : class, IMessage<TRequest>
        where TResponse : class, IMessage<TResponse>
    {
        await using var call = await StartCallAsync<TRequest, TResponse>(service, method, parser, ct).ConfigureAwait(false);
        await call.WriteAsync(message, ct).ConfigureAwait(false);
        await call.CompleteRequestAsync().ConfigureAwait(false);
        TResponse? reply = null;
        await foreach (var r in call.ReadAllAsync(ct).ConfigureAwait(false))
        {
            reply ??= r;
        }
        return reply ?? throw new GrpcCallException(GrpcStatusCode.Internal, "unary call ended without a response");
    }

    private static async Task<Exception> CallFailed(Task<HttpResponseMessage> sending, string? refusal)
    {
        try
        {
            using var response = await sending.ConfigureAwait(false);
            return new GrpcCallException(GrpcStatusCode.Unavailable, $"server answered HTTP {(int)response.StatusCode} before reading the request");
        }
        catch (HttpRequestException e) when (TlsFailure(e) is { } tls)
        {
            return new GrpcCallException(GrpcStatusCode.Unavailable, refusal ?? $"{e.Message} {tls.Message}");
        }
        catch (HttpRequestException e)
        {
            return new GrpcCallException(GrpcStatusCode.Unavailable, e.Message);
        }
    }

    private static AuthenticationException? TlsFailure(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is AuthenticationException tls)
            {
                return tls;
            }
        }
        return null;
    }

    public void Dispose() => _http.Dispose();
}
