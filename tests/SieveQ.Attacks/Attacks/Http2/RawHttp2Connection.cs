using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using SieveQ.Transport.Tls;

namespace SieveQ.Attacks.Attacks.Http2;

/// <summary>How the server ended one stream: its :status and grpc-status, a RST_STREAM code, or the connection going.</summary>
internal sealed record StreamOutcome(string? HttpStatus, string? GrpcStatus, string? GrpcMessage, uint? ResetCode, uint? GoAwayCode, bool ConnectionLost)
{
    /// <summary>One word for counting outcomes: "grpc-status 8", "rst 7", "goaway 11", "http 431", "connection lost".</summary>
    public string Kind =>
        GrpcStatus is not null ? $"grpc-status {GrpcStatus}"
        : ResetCode is { } r ? $"rst {r}"
        : GoAwayCode is { } g ? $"goaway {g}"
        : HttpStatus is not null ? $"http {HttpStatus}"
        : "connection lost";

    /// <summary>Refused with a status the client can read: anything but a gRPC OK or a silent drop of the connection.</summary>
    public bool Refused => GrpcStatus is not null ? GrpcStatus != "0" : !ConnectionLost || GoAwayCode is not null;
}

/// <summary>
/// One HTTP/2 connection written frame by frame over TLS (ALPN h2, the pinned key) or cleartext, from a chosen
/// local address: loopback has the whole 127.0.0.0/8, so an attacker appears as several sources, each staying
/// under the pre-SQ's per-source connection limit. A reader answers SETTINGS and PING (the attacker wants its
/// connection to look alive), returns flow-control credit for what the server sends, and records how each tracked
/// stream ended. Writes are serialised; DATA waits for flow-control credit as a compliant client would.
/// </summary>
internal sealed class RawHttp2Connection : IAsyncDisposable
{
    private readonly Socket _socket;
    private readonly Stream _stream;
    private readonly SemaphoreSlim _writing = new(1, 1);
    private readonly ConcurrentDictionary<int, TaskCompletionSource<StreamOutcome>> _tracked = new();
    private readonly CancellationTokenSource _closing = new();
    private readonly TaskCompletionSource _closed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Lock _window = new();
    private Task _reading = Task.CompletedTask;
    private long _connectionWindow = 65_535;
    private long _initialStreamWindow = 65_535;
    private readonly Dictionary<int, long> _streamWindows = [];
    private int _nextStream = 1;
    private long _resetsReceived;
    private uint? _goAway;

    private RawHttp2Connection(Socket socket, Stream stream)
    {
        _socket = socket;
        _stream = stream;
    }

    /// <summary>Completes when the server closed the connection (GOAWAY or end of stream) or it was disposed.</summary>
    public Task Closed => _closed.Task;

    public uint? GoAwayCode => _goAway;

    /// <summary>Why reading ended: "GOAWAY ENHANCE_YOUR_CALM", "end of stream", "reset (IOException)", "answer not understood (...)"; null while open.</summary>
    public string? CloseReason { get; private set; }

    public long ResetsReceived => Interlocked.Read(ref _resetsReceived);

    /// <summary>
    /// Connects from <paramref name="source"/> (any port), completes TLS when the URL is https://, and writes the preface,
    /// SETTINGS and a connection window large enough for every answer. With <paramref name="preface"/> false it
    /// stops after TCP and TLS and sends no HTTP/2 bytes at all (the silent connection of a Slowloris).
    /// </summary>
    public static async Task<RawHttp2Connection> OpenAsync(Uri url, TlsPin? pin, IPAddress source, CancellationToken ct, bool preface = true)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            socket.Bind(new IPEndPoint(source, 0));
            await socket.ConnectAsync(IPAddress.Parse(url.Host == "localhost" ? "127.0.0.1" : url.Host), url.Port, ct).ConfigureAwait(false);
            Stream stream = new NetworkStream(socket, ownsSocket: false);
            if (url.Scheme == Uri.UriSchemeHttps)
            {
                var tls = new SslStream(stream, leaveInnerStreamOpen: false);
                await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
                {
                    TargetHost = url.Host,
                    EnabledSslProtocols = SslProtocols.Tls13,
                    ApplicationProtocols = [SslApplicationProtocol.Http2],
                    RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate is not null && pin is not null && pin.Matches(certificate),
                }, ct).ConfigureAwait(false);
                stream = tls;
            }
            var c = new RawHttp2Connection(socket, stream);
            if (preface)
            {
                await c.WriteAsync([.. Http2Wire.Preface, .. Http2Wire.ClientSettings(), .. Http2Wire.WindowUpdate(0, 64 * 1024 * 1024)], ct).ConfigureAwait(false);
            }
            c._reading = Task.Run(c.ReadLoopAsync, CancellationToken.None);
            return c;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Opens a stream with a gRPC POST to <paramref name="path"/>; <paramref name="track"/> keeps its outcome for <see cref="OutcomeAsync"/>.</summary>
    public async Task<int> OpenStreamAsync(string path, bool endStream, bool track, CancellationToken ct, IReadOnlyList<(string, string)>? extraHeaders = null)
    {
        var block = Http2Wire.GrpcRequestHeaders("sieveq", path, extraHeaders);
        await _writing.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            var id = _nextStream;
            _nextStream += 2;
            if (track)
            {
                _tracked[id] = new TaskCompletionSource<StreamOutcome>(TaskCreationOptions.RunContinuationsAsynchronously);
            }
            lock (_window)
            {
                _streamWindows[id] = _initialStreamWindow;
            }
            foreach (var frame in Http2Wire.HeaderFrames(id, block, endStream))
            {
                await _stream.WriteAsync(frame, ct).ConfigureAwait(false);
            }
            await _stream.FlushAsync(ct).ConfigureAwait(false);
            return id;
        }
        finally
        {
            _writing.Release();
        }
    }

    /// <summary>
    /// Sends <paramref name="data"/> on a stream in frames of at most 16 KiB, each once flow control allows; false when
    /// credit did not come within <paramref name="creditWait"/> or the stream or connection ended first.
    /// </summary>
    public async Task<bool> SendDataAsync(int stream, ReadOnlyMemory<byte> data, bool endStream, TimeSpan creditWait, CancellationToken ct)
    {
        var at = 0;
        do
        {
            var n = Math.Min(Http2Wire.DefaultMaxFrameBytes, data.Length - at);
            var deadline = DateTime.UtcNow + creditWait;
            while (!TryTakeCredit(stream, n))
            {
                if (DateTime.UtcNow > deadline || Closed.IsCompleted || IsEnded(stream))
                {
                    return false;
                }
                await Task.Delay(5, ct).ConfigureAwait(false);
            }
            var last = at + n == data.Length;
            await WriteAsync(Http2Wire.Frame(FrameType.Data, last && endStream ? Http2Wire.EndStream : (byte)0, stream, data.Span.Slice(at, n)), ct).ConfigureAwait(false);
            at += n;
        }
        while (at < data.Length);
        return true;
    }

    public Task WriteAsync(byte[] bytes, CancellationToken ct) => WriteAsync(bytes, flush: true, ct);

    public async Task WriteAsync(byte[] bytes, bool flush, CancellationToken ct)
    {
        await _writing.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            await _stream.WriteAsync(bytes, ct).ConfigureAwait(false);
            if (flush)
            {
                await _stream.FlushAsync(ct).ConfigureAwait(false);
            }
        }
        finally
        {
            _writing.Release();
        }
    }

    /// <summary>How a tracked stream ended, or null when it had not within <paramref name="wait"/>.</summary>
    public async Task<StreamOutcome?> OutcomeAsync(int stream, TimeSpan wait, CancellationToken ct)
    {
        if (!_tracked.TryGetValue(stream, out var tcs))
        {
            throw new InvalidOperationException($"stream {stream} is not tracked");
        }
        try
        {
            return await tcs.Task.WaitAsync(wait, ct).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            return null;
        }
        finally
        {
            _tracked.TryRemove(stream, out _);
        }
    }

    private bool IsEnded(int stream)
    {
        lock (_window)
        {
            return !_streamWindows.ContainsKey(stream);
        }
    }

    private bool TryTakeCredit(int stream, int n)
    {
        lock (_window)
        {
            if (!_streamWindows.TryGetValue(stream, out var s) || s < n || _connectionWindow < n)
            {
                return false;
            }
            _streamWindows[stream] = s - n;
            _connectionWindow -= n;
            return true;
        }
    }

    private async Task ReadLoopAsync()
    {
        var header = new byte[Http2Wire.FrameHeaderBytes];
        var block = new List<byte>();
        var blockStream = 0;
        var blockEnds = false;
        try
        {
            while (true)
            {
                await _stream.ReadExactlyAsync(header, _closing.Token).ConfigureAwait(false);
                var length = (header[0] << 16) | (header[1] << 8) | header[2];
                var type = (FrameType)header[3];
                var flags = header[4];
                var id = BinaryPrimitives.ReadInt32BigEndian(header.AsSpan(5)) & int.MaxValue;
                var payload = new byte[length];
                await _stream.ReadExactlyAsync(payload, _closing.Token).ConfigureAwait(false);
                switch (type)
                {
                    case FrameType.Settings when (flags & Http2Wire.Ack) == 0:
                        Settings(payload);
                        await WriteAsync(Http2Wire.Frame(FrameType.Settings, Http2Wire.Ack, 0, []), _closing.Token).ConfigureAwait(false);
                        break;
                    case FrameType.Ping when (flags & Http2Wire.Ack) == 0:
                        await WriteAsync(Http2Wire.Frame(FrameType.Ping, Http2Wire.Ack, 0, payload), _closing.Token).ConfigureAwait(false);
                        break;
                    case FrameType.WindowUpdate:
                        Credit(id, BinaryPrimitives.ReadInt32BigEndian(payload) & int.MaxValue);
                        break;
                    case FrameType.Data:
                        if (length > 0 && id != 0)
                        {
                            await WriteAsync(Http2Wire.WindowUpdate(id, length), _closing.Token).ConfigureAwait(false);
                        }
                        if ((flags & Http2Wire.EndStream) != 0)
                        {
                            End(id, new StreamOutcome(null, null, null, null, null, false));
                        }
                        break;
                    case FrameType.Headers or FrameType.Continuation:
                        if (type == FrameType.Headers)
                        {
                            block.Clear();
                            blockStream = id;
                            blockEnds = (flags & Http2Wire.EndStream) != 0;
                            block.AddRange(HeadersFragment(payload, flags));
                        }
                        else
                        {
                            block.AddRange(payload);
                        }
                        if ((flags & Http2Wire.EndHeaders) != 0)
                        {
                            Answered(blockStream, HeaderBlock.Decode([.. block]), blockEnds);
                        }
                        break;
                    case FrameType.RstStream:
                        Interlocked.Increment(ref _resetsReceived);
                        End(id, new StreamOutcome(null, null, null, BinaryPrimitives.ReadUInt32BigEndian(payload), null, false));
                        break;
                    case FrameType.GoAway:
                        _goAway = BinaryPrimitives.ReadUInt32BigEndian(payload.AsSpan(4));
                        var last = BinaryPrimitives.ReadInt32BigEndian(payload) & int.MaxValue;
                        foreach (var s in _tracked.Keys.Where(s => s > last))
                        {
                            End(s, new StreamOutcome(null, null, null, null, _goAway, true));
                        }
                        break;
                    default:
                        break;
                }
            }
        }
        catch (Exception e) when (e is IOException or OperationCanceledException or ObjectDisposedException or EndOfStreamException or AuthenticationException
            or InvalidOperationException or IndexOutOfRangeException or ArgumentException)
        {
            // the server closed the connection (or we did); a malformed answer ends reading as well
            CloseReason = _goAway is { } g ? $"GOAWAY {GoAwayName(g)}"
                : _closing.IsCancellationRequested ? "closed by the attacker"
                : e is EndOfStreamException ? "end of stream"
                : e is IOException or AuthenticationException ? $"reset ({e.GetType().Name})"
                : $"answer not understood ({e.GetType().Name})";
        }
        foreach (var s in _tracked.Keys)
        {
            End(s, new StreamOutcome(null, null, null, null, _goAway, true));
        }
        lock (_window)
        {
            _streamWindows.Clear();
        }
        _closed.TrySetResult();
    }

    public static string GoAwayName(uint code) => code switch
    {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x6 => "FRAME_SIZE_ERROR",
        0x9 => "COMPRESSION_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        _ => $"0x{code:x}",
    };

    private static ReadOnlySpan<byte> HeadersFragment(byte[] payload, byte flags)
    {
        var span = payload.AsSpan();
        var pad = (flags & 0x8) != 0 ? span[0] : 0;
        span = (flags & 0x8) != 0 ? span[1..] : span;
        span = (flags & 0x20) != 0 ? span[5..] : span;
        return span[..(span.Length - pad)];
    }

    private void Settings(ReadOnlySpan<byte> payload)
    {
        for (var at = 0; at + 6 <= payload.Length; at += 6)
        {
            if (BinaryPrimitives.ReadUInt16BigEndian(payload[at..]) == 0x4)
            {
                var size = BinaryPrimitives.ReadUInt32BigEndian(payload[(at + 2)..]);
                lock (_window)
                {
                    var delta = size - _initialStreamWindow;
                    _initialStreamWindow = size;
                    foreach (var s in _streamWindows.Keys.ToList())
                    {
                        _streamWindows[s] += delta;
                    }
                }
            }
        }
    }

    private void Credit(int stream, int increment)
    {
        lock (_window)
        {
            if (stream == 0)
            {
                _connectionWindow += increment;
            }
            else if (_streamWindows.TryGetValue(stream, out var w))
            {
                _streamWindows[stream] = w + increment;
            }
        }
    }

    private void Answered(int stream, IReadOnlyList<(string Name, string Value)> fields, bool ends)
    {
        if (!_tracked.TryGetValue(stream, out var tcs))
        {
            if (ends)
            {
                End(stream, new StreamOutcome(null, null, null, null, null, false));
            }
            return;
        }
        string? Field(string name) => fields.Where(f => f.Name == name).Select(f => f.Value).FirstOrDefault();
        var grpc = Field("grpc-status");
        // A trailers-only answer or the trailers end the call; a non-200 :status ends it too (there will be no gRPC).
        if (grpc is not null || ends || (Field(":status") is { } st && st != "200"))
        {
            End(stream, new StreamOutcome(Field(":status"), grpc, Field("grpc-message"), null, null, false));
        }
    }

    private void End(int stream, StreamOutcome outcome)
    {
        lock (_window)
        {
            _streamWindows.Remove(stream);
        }
        if (_tracked.TryGetValue(stream, out var tcs))
        {
            tcs.TrySetResult(outcome);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _closing.CancelAsync().ConfigureAwait(false);
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
            // already gone
        }
        await _stream.DisposeAsync().ConfigureAwait(false);
        _socket.Dispose();
        await _reading.ConfigureAwait(false);
        _closing.Dispose();
        _writing.Dispose();
    }

    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"h2 {_socket.LocalEndPoint} -> {_socket.RemoteEndPoint}");
}
