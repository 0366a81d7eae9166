using SieveQ.Deployment;
using SieveQ.Sdk.Sender;

namespace SieveQ.Cli.Bench;

/// <summary>
/// The end of a run that loads a deployment of processes (`bench e2e`, the attack bench): the senders first, so that
/// nothing new is sent, then the receiver's reading, then every component with a grace of 10 s each.
/// </summary>
internal static class LoadRunTeardown
{
    public static async Task StopAsync(IEnumerable<SieveQSender> senders, CancellationTokenSource stopReading, Task reading, ComponentProcesses processes)
    {
        foreach (var sender in senders)
        {
            await sender.DisposeAsync().ConfigureAwait(false);
        }
        await stopReading.CancelAsync().ConfigureAwait(false);
        try
        {
            await reading.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // stopped reading
        }
        await processes.StopAllAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
    }
}
