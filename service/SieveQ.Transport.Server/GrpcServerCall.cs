using System.Runtime.CompilerServices;
using Google.Protobuf;
using Microsoft.AspNetCore.Http;

namespace SieveQ.Transport;

/// <summary>One server-side call: a stream of requests in, a stream of responses out, one writer at a time.</summary>
public sealed class GrpcServerCall<TRequest, TResponse>
    where TRequest : class, IMessage<TRequest>
    where TResponse : class, IMessage<TResponse>
{
    private readonly MessageParser<TRequest> _parser;
    private readonly int _maxMessageBytes;
    private readonly SemaphoreSlim _writeLock = new(1, 1);

    internal GrpcServerCall(HttpContext context, MessageParser<TRequest> parser, int maxMessageBytes)
    {
        HttpContext = context;
        _parser = parser;
        _maxMessageBytes = maxMessageBytes;
    }

    public HttpContext HttpContext { get; }
    public CancellationToken CallAborted => HttpContext.RequestAborted;
    public long MessagesRead { get; private set; }
    public long MessagesWritten { get; private set; }

    public async IAsyncEnumerable<TRequest> ReadAllAsync([EnumeratorCancellation] CancellationToken ct = default)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(ct, CallAborted);
        while (await GrpcFraming.ReadAsync(HttpContext.Request.BodyReader, _parser, _maxMessageBytes, linked.Token).ConfigureAwait(false) is { } m)
        {
            MessagesRead++;
            yield return m;
        }
    }

    /// <summary>When set, the time from the call's start within which its reads must complete (<see cref="GrpcRequestDeadline"/>).</summary>
    internal TimeSpan? RequestDeadline { get; init; }

    private readonly long _startedAtMs = Environment.TickCount64;

    public async ValueTask<TRequest?> ReadOneAsync(CancellationToken ct = default)
    {
        if (RequestDeadline is not { } limit)
        {
            return Counted(await GrpcFraming.ReadAsync(HttpContext.Request.BodyReader, _parser, _maxMessageBytes, ct).ConfigureAwait(false));
        }
        var left = limit - TimeSpan.FromMilliseconds(Environment.TickCount64 - _startedAtMs);
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(ct);
        deadline.CancelAfter(left > TimeSpan.Zero ? left : TimeSpan.Zero);
        try
        {
            return Counted(await GrpcFraming.ReadAsync(HttpContext.Request.BodyReader, _parser, _maxMessageBytes, deadline.Token).ConfigureAwait(false));
        }
        catch (OperationCanceledException) when (deadline.IsCancellationRequested && !ct.IsCancellationRequested && !CallAborted.IsCancellationRequested)
        {
            GrpcRequestDeadline.Count();
            throw new GrpcCallException(GrpcStatusCode.DeadlineExceeded, $"the request did not arrive within {limit.TotalSeconds:0.#} s of the call's start");
        }
    }

    private TRequest? Counted(TRequest? m)
    {
        if (m is not null)
        {
            MessagesRead++;
        }
        return m;
    }

    /// <summary>Writes one response; <paramref name="flush"/> false lets a caller batch several into one HTTP/2 DATA frame.</summary>
    public async ValueTask WriteAsync(TResponse message, bool flush = true, CancellationToken ct = default)
    {
        await _writeLock.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            GrpcFraming.Write(HttpContext.Response.BodyWriter, message);
            MessagesWritten++;
            if (flush)
            {
                await HttpContext.Response.BodyWriter.FlushAsync(ct).ConfigureAwait(false);
            }
        }
        finally
        {
            _writeLock.Release();
        }
    }

    public async ValueTask FlushAsync(CancellationToken ct = default)
    {
        await _writeLock.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            await HttpContext.Response.BodyWriter.FlushAsync(ct).ConfigureAwait(false);
        }
        finally
        {
            _writeLock.Release();
        }
    }
}
