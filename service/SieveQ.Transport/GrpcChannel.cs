using System.Net;
using System.Net.Sockets;
using Google.Protobuf;

namespace SieveQ.Transport;

/// <summary>
/// A client connection pool to one gRPC server over cleartext HTTP/2 (prior knowledge), on TCP or
/// a Unix domain socket. One HTTP/2 connection carries many concurrent calls.
/// </summary>
public sealed class GrpcChannel : IDisposable
{
    private readonly HttpClient _http;

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

    public static GrpcChannel ForAddress(Uri address, int maxMessageBytes = GrpcFraming.DefaultMaxMessageBytes) =>
        new(address, NewHandler(), maxMessageBytes);

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
            : throw await CallFailed(sending).ConfigureAwait(false);
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

    private static async Task<Exception> CallFailed(Task<HttpResponseMessage> sending)
    {
        try
        {
            using var response = await sending.ConfigureAwait(false);
            return new GrpcCallException(GrpcStatusCode.Unavailable, $"server answered HTTP {(int)response.StatusCode} before reading the request");
        }
        catch (HttpRequestException e)
        {
            return new GrpcCallException(GrpcStatusCode.Unavailable, e.Message);
        }
    }

    public void Dispose() => _http.Dispose();
}
