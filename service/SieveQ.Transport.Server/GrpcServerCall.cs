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

    public async ValueTask<TRequest?> ReadOneAsync(CancellationToken ct = default)
    {
        var m = await GrpcFraming.ReadAsync(HttpContext.Request.BodyReader, _parser, _maxMessageBytes, ct).ConfigureAwait(false);
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
