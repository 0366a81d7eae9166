using SieveQ.Deployment;

namespace SieveQ.Attacks.Attacks.Http2;

/// <summary>
/// The attacked pre-SQ's <c>open_streams</c> gauge, read every <see cref="Every"/> while the attack runs: the largest
/// value read shows how many streams the attacker got the pre-SQ to hold, and the value after the run whether it let
/// them all go.
/// </summary>
internal sealed class OpenStreamsProbe
{
    private static readonly TimeSpan Every = TimeSpan.FromSeconds(2);
    private long _peak;

    public long Peak => Interlocked.Read(ref _peak);

    public async Task RunAsync(DeploymentConfig config, string name, CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(Every, stop).ConfigureAwait(false);
                var all = await DeploymentHealth.ProbeAllAsync(config with { Agents = [] }, TimeSpan.FromSeconds(2), stop).ConfigureAwait(false);
                var open = all.Where(h => h.Name == name).Select(h => h.Counters.GetValueOrDefault("open_streams")).DefaultIfEmpty(0).Max();
                var seen = Interlocked.Read(ref _peak);
                if (open > seen)
                {
                    Interlocked.Exchange(ref _peak, open);
                }
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }
}
