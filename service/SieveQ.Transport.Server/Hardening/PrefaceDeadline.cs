using Microsoft.AspNetCore.Connections;

namespace SieveQ.Transport.Hardening;

/// <summary>
/// Kestrel connection middleware closing a connection whose client sends nothing within the request
/// headers timeout. Kestrel itself waits for the HTTP/2 preface for the whole keep-alive timeout (its
/// RequestHeadersTimeout only runs once a HEADERS block has started), and the keep-alive timeout must stay
/// long for legitimate idle connections; a silent new connection is the cheapest Slowloris there is, so
/// it gets the short deadline. The bytes read here are left in the pipe for HTTP/2 to read again.
/// </summary>
public sealed class PrefaceDeadline
{
    private readonly TimeSpan _deadline;
    private long _closed;

    public PrefaceDeadline(TimeSpan deadline)
    {
        _deadline = deadline;
    }

    /// <summary>How long a new connection has for its first HTTP/2 bytes (behind TLS: for the handshake and those bytes).</summary>
    public TimeSpan Deadline => _deadline;

    /// <summary>Connections closed for sending nothing in time.</summary>
    public long Closed => Volatile.Read(ref _closed);

    /// <summary>
    /// For a TLS listener, placed before TLS: one deadline for the handshake and the HTTP/2 preface together, so a
    /// client that opens a TLS handshake and never finishes it is cut and counted as a silent h2c one is.
    /// <see cref="Wrap"/>, placed after TLS, reports the preface.
    /// </summary>
    public ConnectionDelegate WrapHandshake(ConnectionDelegate next) => async connection =>
    {
        var arrival = new PrefaceArrival();
        connection.Features.Set(arrival);
        using var timer = new CancellationTokenSource(_deadline);
        using var expiry = timer.Token.Register(() =>
        {
            if (arrival.TryExpire())
            {
                Interlocked.Increment(ref _closed);
                connection.Abort(new ConnectionAbortedException("no TLS handshake and HTTP/2 preface before the request headers timeout"));
            }
        });
        await next(connection).ConfigureAwait(false);
    };

    public ConnectionDelegate Wrap(ConnectionDelegate next) => async connection =>
    {
        if (connection.Features.Get<PrefaceArrival>() is { } arrival)
        {
            // Behind TLS: the deadline runs in WrapHandshake, which aborts this read when it passes.
            try
            {
                var first = await connection.Transport.Input.ReadAsync().ConfigureAwait(false);
                connection.Transport.Input.AdvanceTo(first.Buffer.Start);
                if ((first.Buffer.IsEmpty && first.IsCompleted) || !arrival.TryArrive())
                {
                    return;
                }
            }
            catch (Exception e) when (e is IOException or ConnectionAbortedException or OperationCanceledException)
            {
                return;
            }
            await next(connection).ConfigureAwait(false);
            return;
        }
        var input = connection.Transport.Input;
        using (var timer = new CancellationTokenSource(_deadline))
        {
            try
            {
                var first = await input.ReadAsync(timer.Token).ConfigureAwait(false);
                // Nothing consumed, nothing examined: the next read returns these bytes at once.
                input.AdvanceTo(first.Buffer.Start);
                if (first.Buffer.IsEmpty && first.IsCompleted)
                {
                    return;
                }
            }
            catch (OperationCanceledException) when (timer.IsCancellationRequested)
            {
                Interlocked.Increment(ref _closed);
                connection.Abort(new ConnectionAbortedException("nothing received before the request headers timeout"));
                return;
            }
            catch (Exception e) when (e is IOException or ConnectionAbortedException)
            {
                // Gone before it said anything (a reset, or the server stopping).
                return;
            }
        }
        await next(connection).ConfigureAwait(false);
    };
}

/// <summary>Whether a TLS connection's first HTTP/2 bytes came before its deadline: whichever of the two happens first wins.</summary>
internal sealed class PrefaceArrival
{
    private int _state;

    public bool TryArrive() => Interlocked.CompareExchange(ref _state, 1, 0) == 0;

    public bool TryExpire() => Interlocked.CompareExchange(ref _state, 2, 0) == 0;
}
