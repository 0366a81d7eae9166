using SieveQ.Cli.Running;

namespace SieveQ.Cli.Tests;

/// <summary>The foreground wait shared by `pre-sq`, `replica-sq`, `replica` (and the stop signal `up` uses too).</summary>
[Collection(nameof(ConsoleCapture))]
public sealed class RunUntilStoppedTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_stop_request_ends_the_wait_with_exit_code_0_after_status_lines_every_second()
    {
        var (exit, stdout, _) = await CaptureAsync(async () =>
        {
            using var stop = new CancellationTokenSource(TimeSpan.FromMilliseconds(2_500));
            var polls = 0;
            return await RunUntilStopped.WaitAsync(stop.Token, new TaskCompletionSource().Task, "test loop", () => $"{{\"poll\":{++polls}}}").WaitAsync(Generous);
        });
        Assert.Equal(0, exit);
        Assert.Contains("status {\"poll\":1}", stdout, StringComparison.Ordinal);
        Assert.Contains("status {\"poll\":2}", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_component_that_fails_ends_the_wait_and_its_status_lines_with_exit_code_2()
    {
        var (exit, stdout, stderr) = await CaptureAsync(async () =>
        {
            var failing = Task.Run(async () =>
            {
                await Task.Delay(1_300);
                throw new InvalidOperationException("disk on fire");
            });
            // Never asked to stop: the component's end alone must end the wait.
            return await RunUntilStopped.WaitAsync(CancellationToken.None, failing, "replica 7 core loop", () => "{}").WaitAsync(Generous);
        });
        Assert.Equal(2, exit);
        Assert.Contains("replica 7 core loop failed: System.InvalidOperationException: disk on fire", stderr, StringComparison.Ordinal);
        Assert.Contains("status {}", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_component_that_ends_cleanly_ends_the_wait_with_exit_code_0()
    {
        var (exit, _, stderr) = await CaptureAsync(() => RunUntilStopped.WaitAsync(CancellationToken.None, Task.CompletedTask, "pre-sq 1 event loop").WaitAsync(Generous));
        Assert.Equal(0, exit);
        Assert.Equal("", stderr);
    }

    [Fact]
    public async Task A_tick_cut_short_by_the_stop_ends_the_ticking_quietly()
    {
        using var stop = new CancellationTokenSource();
        var ticks = 0;
        var ticking = RunUntilStopped.EverySecondAsync(async ct =>
        {
            ticks++;
            await stop.CancelAsync();
            await Task.Delay(Timeout.Infinite, ct);
        }, stop.Token);
        await ticking.WaitAsync(Generous);
        Assert.Equal(1, ticks);
    }

    [Fact]
    public async Task The_stop_signal_follows_the_commands_token_and_its_deadline()
    {
        using var command = new CancellationTokenSource();
        using (var byCommand = new StopSignal(command.Token))
        {
            Assert.False(byCommand.IsStopRequested);
            await command.CancelAsync();
            Assert.True(byCommand.IsStopRequested);
        }
        using var byDeadline = new StopSignal(CancellationToken.None);
        byDeadline.StopAfter(TimeSpan.FromMilliseconds(50));
        await Task.Delay(Timeout.Infinite, byDeadline.Token).ContinueWith(_ => { }, TaskScheduler.Default).WaitAsync(Generous);
        Assert.True(byDeadline.IsStopRequested);
        using var never = new StopSignal(CancellationToken.None);
        never.StopAfter(Timeout.InfiniteTimeSpan);
        await Task.Delay(100);
        Assert.False(never.IsStopRequested);
    }

    private static async Task<(int Exit, string Out, string Err)> CaptureAsync(Func<Task<int>> run)
    {
        var (stdout, stderr) = (Console.Out, Console.Error);
        using var o = new StringWriter();
        using var e = new StringWriter();
        Console.SetOut(TextWriter.Synchronized(o));
        Console.SetError(TextWriter.Synchronized(e));
        try
        {
            var exit = await run();
            return (exit, o.ToString(), e.ToString());
        }
        finally
        {
            Console.SetOut(stdout);
            Console.SetError(stderr);
        }
    }
}
