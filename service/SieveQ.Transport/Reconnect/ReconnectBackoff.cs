namespace SieveQ.Transport.Reconnect;

/// <summary>
/// Capped exponential back-off for a loop that keeps a connection or subscription open: each wait doubles
/// the next, up to the cap, and a connection that worked starts it over. A server that just restarted is
/// not hammered by every client at once, and a long outage costs one attempt per cap interval. Not
/// thread-safe: it belongs to the one loop that reconnects.
/// </summary>
public sealed class ReconnectBackoff
{
    private readonly BackoffJitter _jitter;
    private readonly Random _random;
    private TimeSpan _next;

    /// <param name="initial">The first wait after a connection that worked (or none yet).</param>
    /// <param name="max">No nominal wait is longer (a jittered one may be, by the jitter's high factor).</param>
    /// <param name="jitter">How far each wait strays from its nominal interval.</param>
    /// <param name="random">The source of jitter; tests pass a fixed one.</param>
    public ReconnectBackoff(TimeSpan initial, TimeSpan max, BackoffJitter jitter, Random? random = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(initial, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfLessThan(max, initial);
        Initial = initial;
        Max = max;
        _jitter = jitter;
        _random = random ?? Random.Shared;
        _next = initial;
    }

    public TimeSpan Initial { get; }

    public TimeSpan Max { get; }

    /// <summary>Waits handed out since the last <see cref="Reset"/>.</summary>
    public int Failures { get; private set; }

    /// <summary>The connection worked: the next wait is the initial one again.</summary>
    public void Reset()
    {
        _next = Initial;
        Failures = 0;
    }

    /// <summary>The wait before the next attempt (jittered); the one after it doubles, up to the cap.</summary>
    public TimeSpan NextDelay()
    {
        Failures++;
        var wait = _jitter.Apply(_next, _random.NextDouble());
        _next = _next.Ticks > Max.Ticks - _next.Ticks ? Max : TimeSpan.FromTicks(_next.Ticks * 2);
        return wait;
    }

    /// <summary>Waits <see cref="NextDelay"/>.</summary>
    /// <returns>False when <paramref name="ct"/> fired first: the loop is asked to stop, not to reconnect.</returns>
    public async Task<bool> WaitAsync(CancellationToken ct)
    {
        try
        {
            await Task.Delay(NextDelay(), ct).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            return false;
        }
    }
}
