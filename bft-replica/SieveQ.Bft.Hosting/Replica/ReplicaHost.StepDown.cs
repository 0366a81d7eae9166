using System.Diagnostics;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>A planned stop of the leader: it hands the regency over before it goes (<see cref="SieveQ.Bft.Core.ReplicaCore.StepDown"/>).</summary>
public sealed partial class ReplicaHost
{
    private TaskCompletionSource<bool>? _stepDown;

    /// <summary>
    /// Asks the core, on its own thread, to step down if it leads, and returns once its STOP has left every link's
    /// send queue (or <paramref name="wait"/> passed): the others then change regency at once instead of after the
    /// leader-silence time-out. False when it did not lead (nothing to hand over) or the core did not answer in time.
    /// </summary>
    public async Task<bool> StepDownAsync(TimeSpan wait)
    {
        var clock = Stopwatch.StartNew();
        var request = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        Interlocked.Exchange(ref _stepDown, request)?.TrySetResult(false);
        _inbox.Ring();
        bool asked;
        try
        {
            asked = await request.Task.WaitAsync(wait).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            return false;
        }
        while (asked && clock.Elapsed < wait && _peers.Values.Any(p => p.IsConnected && p.Queue.Count > 0))
        {
            await Task.Delay(10).ConfigureAwait(false);
        }
        return asked;
    }

    /// <summary>In the drain, before stepping messages: the step-down asked for, if any; its STOP goes out with the drain's outputs.</summary>
    private (TaskCompletionSource<bool> Request, bool Asked)? TakeStepDown(SieveQ.Bft.Core.ReplicaCore core, long now) =>
        Interlocked.Exchange(ref _stepDown, null) is { } request ? (request, core.StepDown(now)) : null;
}
