using System.Diagnostics;
using SieveQ.Sdk.Sender;

namespace SieveQ.Attacks;

/// <summary>
/// One legitimate sender's steady load: open loop at a fixed rate, paced in 1 ms slots (a late slot is caught up, not
/// skipped), each payload numbered (<see cref="LegitimatePayload"/>). <see cref="Sent"/> counts messages the SDK
/// accepted: each must reach the receiver exactly once.
/// </summary>
internal sealed class LegitimateLoad(SieveQSender sender, int receiver, int ratePerSecond, int size)
{
    private static readonly TimeSpan UnavailablePause = TimeSpan.FromSeconds(1);
    private long _sent;
    private long _refusals;

    /// <summary>Sends the SDK refused because the deployment did not answer in time (nothing accepted, so nothing owed).</summary>
    public long Refusals => Interlocked.Read(ref _refusals);

    public int Sender => sender.Id;

    public long Sent => Interlocked.Read(ref _sent);

    public async Task RunAsync(CancellationToken stop)
    {
        var clock = Stopwatch.StartNew();
        try
        {
            while (!stop.IsCancellationRequested)
            {
                var due = (long)(clock.Elapsed.TotalSeconds * ratePerSecond) + 1;
                if (Sent >= due)
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(1), stop).ConfigureAwait(false);
                    continue;
                }
                while (Sent < due)
                {
                    try
                    {
                        await sender.SendAsync(receiver, LegitimatePayload.Create(sender.Id, (int)Sent, size), stop).ConfigureAwait(false);
                    }
                    catch (SieveQUnavailableException)
                    {
                        // Not accepted: the same index is offered again once the pause is over, as an application would.
                        Interlocked.Increment(ref _refusals);
                        await Task.Delay(UnavailablePause, stop).ConfigureAwait(false);
                        continue;
                    }
                    Interlocked.Increment(ref _sent);
                }
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // the run is over; a send cancelled half-way was not accepted
        }
    }
}
