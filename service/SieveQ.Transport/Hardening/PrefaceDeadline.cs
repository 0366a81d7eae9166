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

    /// <summary>Also the TLS handshake timeout of a TLS listener: a handshake never finished is the same Slowloris.</summary>
    public TimeSpan Deadline => _deadline;

    /// <summary>Connections closed for sending nothing in time.</summary>
    public long Closed => Volatile.Read(ref _closed);

    public ConnectionDelegate Wrap(ConnectionDelegate next) => async connection =>
    {
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
