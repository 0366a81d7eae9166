namespace SieveQ.Sdk.Internal;

/// <summary>
/// Capped exponential back-off with jitter for reconnecting to a pre-SQ or replica-SQ: a component
/// that just restarted is not hammered by every client at the same instant, and a long outage costs
/// one attempt per cap interval.
/// </summary>
internal sealed class Backoff
{
    private readonly TimeSpan _initial;
    private readonly TimeSpan _max;
    private TimeSpan _next;

    public Backoff(TimeSpan initial, TimeSpan max)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(initial, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfLessThan(max, initial);
        _initial = initial;
        _max = max;
        _next = initial;
    }

    public int Failures { get; private set; }

    public void Reset()
    {
        _next = _initial;
        Failures = 0;
    }

    /// <summary>Waits the current interval (with up to 25 % jitter either way) and doubles it.</summary>
    public Task WaitAsync(CancellationToken ct)
    {
        Failures++;
        var jitter = 0.75 + Random.Shared.NextDouble() * 0.5;
        var wait = TimeSpan.FromTicks((long)(_next.Ticks * jitter));
        _next = TimeSpan.FromTicks(Math.Min(_max.Ticks, _next.Ticks * 2));
        return Task.Delay(wait, ct);
    }
}
