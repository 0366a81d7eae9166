using System.Diagnostics;

namespace SieveQ.Cli.Bench;

/// <summary>
/// Offers load: at a fixed rate (open loop, paced in 1 ms slots so a late slot is caught up, not
/// skipped) or as fast as the sending side's back-pressure lets it ("max").
/// </summary>
internal static class PacedSender
{
    public static async Task<long> RunAsync(Func<ReadOnlyMemory<byte>, CancellationToken, ValueTask> send, int size, int? ratePerSecond, TimeSpan duration, CancellationToken ct)
    {
        var payload = new byte[size];
        Random.Shared.NextBytes(payload);
        var clock = Stopwatch.StartNew();
        long sent = 0;
        try
        {
            while (clock.Elapsed < duration && !ct.IsCancellationRequested)
            {
                long due = ratePerSecond is { } r ? (long)(clock.Elapsed.TotalSeconds * r) + 1 : sent + 64;
                if (sent >= due)
                {
                    // Sleep until the next message is due (at least the timer's 1 ms), not in 1 ms polls:
                    // the load generator shares the cores with the system it measures.
                    var nextDueMs = ratePerSecond is { } rr ? sent * 1000.0 / rr - clock.Elapsed.TotalMilliseconds : 1;
                    await Task.Delay(TimeSpan.FromMilliseconds(Math.Clamp(nextDueMs, 1, 100)), ct).ConfigureAwait(false);
                    continue;
                }
                while (sent < due)
                {
                    var copy = new byte[size];
                    payload.CopyTo(copy, 0);
                    DeliveryMeter.Stamp(copy);
                    await send(copy, ct).ConfigureAwait(false);
                    sent++;
                }
            }
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // stopped
        }
        return sent;
    }
}
