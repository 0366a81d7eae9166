using System.Diagnostics;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// Paces an attacker at a rate per second from its start: each call to <see cref="NextAsync"/> waits until at least one
/// send is due and returns the numbers of the sends due now. Catching up after a pause is bounded to a tenth of a
/// second's worth, so a late attacker does not burst a second's worth at once.
/// </summary>
internal sealed class AttackPace(long ratePerSecond)
{
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private long _sent;

    /// <summary>The sends due now, numbered from 0 over the attacker's life; counted as sent once returned.</summary>
    public async Task<(long First, long Count)> NextAsync(CancellationToken stop)
    {
        while (true)
        {
            var due = (long)(_clock.Elapsed.TotalSeconds * ratePerSecond) + 1;
            if (_sent < due)
            {
                var first = Math.Max(_sent, due - (ratePerSecond / 10));
                _sent = due;
                return (first, due - first);
            }
            await Task.Delay(TimeSpan.FromMilliseconds(1), stop).ConfigureAwait(false);
        }
    }
}
