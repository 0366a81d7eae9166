namespace SieveQ.Cli.Running;

/// <summary>
/// The wait of a command that runs one component (pre-sq, replica-sq, replica, agent; inside <see cref="ComponentHost"/>): until it is
/// asked to stop or the component ends by itself, printing a status line every second meanwhile if asked to.
/// </summary>
internal static class RunUntilStopped
{
    /// <param name="stop">Ctrl-C, SIGTERM (<see cref="StopSignal"/>).</param>
    /// <param name="completion">Ends when the component's own loop ends (null: it has none); a fault is reported as <paramref name="what"/> failing.</param>
    /// <param name="what">Names the loop in the failure message, e.g. "replica 2 core loop".</param>
    /// <param name="statusJson">When given, printed as a `status {json}` line on stdout every second (scripts and benchmarks read them).</param>
    /// <returns>The exit code: 0 when stopped or ended cleanly, 2 when the component failed.</returns>
    public static async Task<int> WaitAsync(CancellationToken stop, Task? completion, string what, Func<string>? statusJson = null)
    {
        using var running = CancellationTokenSource.CreateLinkedTokenSource(stop);
        var printer = statusJson is null
            ? Task.CompletedTask
            : EverySecondAsync(ct => Console.Out.WriteLineAsync("status " + statusJson()), running.Token);
        var stopped = Task.Delay(Timeout.Infinite, stop).ContinueWith(static _ => { }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        var finished = await Task.WhenAny(completion is null ? [stopped] : [stopped, completion]).ConfigureAwait(false);
        // A component that ended by itself ends its status lines too.
        await running.CancelAsync().ConfigureAwait(false);
        await printer.ConfigureAwait(false);
        if (completion is { IsFaulted: true } && finished == completion)
        {
            await Console.Error.WriteLineAsync($"{what} failed: {completion.Exception?.GetBaseException()}").ConfigureAwait(false);
            return 2;
        }
        return 0;
    }

    /// <summary>Runs <paramref name="tick"/> once a second until <paramref name="stop"/>; a tick cut short by the stop ends quietly.</summary>
    public static Task EverySecondAsync(Func<CancellationToken, Task> tick, CancellationToken stop) => EverySecondsAsync(TimeSpan.FromSeconds(1), tick, stop);

    /// <summary>Runs <paramref name="tick"/> every <paramref name="period"/> until <paramref name="stop"/>; a tick cut short by the stop ends quietly.</summary>
    public static async Task EverySecondsAsync(TimeSpan period, Func<CancellationToken, Task> tick, CancellationToken stop)
    {
        using var timer = new PeriodicTimer(period);
        try
        {
            while (await timer.WaitForNextTickAsync(stop).ConfigureAwait(false))
            {
                await tick(stop).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // asked to stop
        }
    }
}
