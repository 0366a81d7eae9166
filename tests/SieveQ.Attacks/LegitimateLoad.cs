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
    private long _sent;

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
                    await sender.SendAsync(receiver, LegitimatePayload.Create(sender.Id, (int)Sent, size), stop).ConfigureAwait(false);
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
