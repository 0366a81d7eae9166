using System.Buffers;
using System.Buffers.Binary;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using Google.Protobuf;

namespace SieveQ.Transport;

/// <summary>The client side of one streaming call: write requests, read responses, then the final status.</summary>
public sealed class GrpcDuplexCall<TRequest, TResponse> : IAsyncDisposable
    where TRequest : class, IMessage<TRequest>
    where TResponse : class, IMessage<TResponse>
{
    private readonly HttpRequestMessage _request;
    private readonly DuplexRequestContent _content;
    private readonly Stream _body;
    private readonly Task<HttpResponseMessage> _response;
    private readonly MessageParser<TResponse> _parser;
    private readonly int _maxMessageBytes;
    private readonly SemaphoreSlim _writeLock = new(1, 1);
    private HttpResponseMessage? _responseMessage;

    internal GrpcDuplexCall(HttpRequestMessage request, DuplexRequestContent content, Stream body, Task<HttpResponseMessage> response, MessageParser<TResponse> parser, int maxMessageBytes)
    {
        _request = request;
        _content = content;
        _body = body;
        _response = response;
        _parser = parser;
        _maxMessageBytes = maxMessageBytes;
    }

    public GrpcStatusCode? Status { get; private set; }
    public string? StatusDetail { get; private set; }

    /// <summary>Writes one request; <paramref name="flush"/> false lets callers batch several messages into one write.</summary>
    public async ValueTask WriteAsync(TRequest message, CancellationToken ct = default, bool flush = true)
    {
        ArgumentNullException.ThrowIfNull(message);
        var size = message.CalculateSize();
        var buffer = ArrayPool<byte>.Shared.Rent(GrpcFraming.HeaderSize + size);
        try
        {
            buffer[0] = 0;
            BinaryPrimitives.WriteUInt32BigEndian(buffer.AsSpan(1), (uint)size);
            message.WriteTo(buffer.AsSpan(GrpcFraming.HeaderSize, size));
            await _writeLock.WaitAsync(ct).ConfigureAwait(false);
            try
            {
                await _body.WriteAsync(buffer.AsMemory(0, GrpcFraming.HeaderSize + size), ct).ConfigureAwait(false);
                if (flush)
                {
                    await _body.FlushAsync(ct).ConfigureAwait(false);
                }
            }
            finally
            {
                _writeLock.Release();
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    public async ValueTask FlushAsync(CancellationToken ct = default)
    {
        await _writeLock.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            await _body.FlushAsync(ct).ConfigureAwait(false);
        }
        finally
        {
            _writeLock.Release();
        }
    }

    /// <summary>Ends the request stream; responses may still follow.</summary>
    public Task CompleteRequestAsync()
    {
        _content.Complete();
        return Task.CompletedTask;
    }

    /// <summary>Reads responses until the server ends the call; throws <see cref="GrpcCallException"/> on a non-OK status.</summary>
    public async IAsyncEnumerable<TResponse> ReadAllAsync([EnumeratorCancellation] CancellationToken ct = default)
    {
        var response = _responseMessage ??= await _response.ConfigureAwait(false);
        if (response.StatusCode != System.Net.HttpStatusCode.OK)
        {
            throw new GrpcCallException(GrpcStatusCode.Unavailable, $"HTTP {(int)response.StatusCode}");
        }
        // A trailers-only response carries the status in the headers.
        if (ReadStatus(response.Headers) is { } early && early != GrpcStatusCode.Ok)
        {
            throw new GrpcCallException(early, StatusDetail ?? "call failed");
        }
        var stream = await response.Content.ReadAsStreamAsync(ct).ConfigureAwait(false);
        var reader = PipeReader.Create(stream);
        while (await GrpcFraming.ReadAsync(reader, _parser, _maxMessageBytes, ct).ConfigureAwait(false) is { } m)
        {
            yield return m;
        }
        await reader.CompleteAsync().ConfigureAwait(false);
        var status = ReadStatus(response.TrailingHeaders) ?? ReadStatus(response.Headers)
            ?? throw new GrpcCallException(GrpcStatusCode.Internal, "call ended without grpc-status");
        if (status != GrpcStatusCode.Ok)
        {
            throw new GrpcCallException(status, StatusDetail ?? "call failed");
        }
    }

    private GrpcStatusCode? ReadStatus(System.Net.Http.Headers.HttpHeaders headers)
    {
        if (!headers.TryGetValues("grpc-status", out var values) || !int.TryParse(values.FirstOrDefault(), out var code))
        {
            return null;
        }
        if (headers.TryGetValues("grpc-message", out var detail))
        {
            StatusDetail = Uri.UnescapeDataString(detail.FirstOrDefault() ?? "");
        }
        Status = (GrpcStatusCode)code;
        return Status;
    }

    public async ValueTask DisposeAsync()
    {
        _content.Complete();
        if (_response.IsCompletedSuccessfully)
        {
            _response.Result.Dispose();
        }
        else
        {
            _ = _response.ContinueWith(t => t.Result.Dispose(), CancellationToken.None, TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
        }
        _request.Dispose();
        _writeLock.Dispose();
        await Task.CompletedTask.ConfigureAwait(false);
    }
}
