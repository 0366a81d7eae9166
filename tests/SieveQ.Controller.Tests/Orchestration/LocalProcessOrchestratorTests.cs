using System.Diagnostics;
using SieveQ.Controller.Orchestration;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary>The local-process orchestrator with real child processes.</summary>
public sealed class LocalProcessOrchestratorTests
{
    [Fact]
    public async Task Starts_and_stops_real_processes_and_repeats_change_nothing()
    {
        await using var s = new SleepProcesses(1, 2);
        var o = s.Orchestrator;
        Assert.StartsWith("started pid ", await o.StartAsync(ComponentRef.PreSq(1), CancellationToken.None), StringComparison.Ordinal);
        var pid = s.Pid(1)!.Value;
        Assert.Equal($"already running (pid {pid})", await o.StartAsync(ComponentRef.PreSq(1), CancellationToken.None));

        Assert.Equal($"stopped (pid {pid})", await o.StopAsync(ComponentRef.PreSq(1), CancellationToken.None));
        Assert.Throws<ArgumentException>(() => Process.GetProcessById(pid));
        Assert.Equal("not running under this controller", await o.StopAsync(ComponentRef.PreSq(1), CancellationToken.None));
        Assert.Null(s.Pid(1));
    }

    [Fact]
    public async Task A_component_not_in_the_plan_is_refused()
    {
        await using var s = new SleepProcesses(1);
        await Assert.ThrowsAsync<OrchestratorException>(() => s.Orchestrator.StartAsync(ComponentRef.PreSq(9), CancellationToken.None));
        await Assert.ThrowsAsync<OrchestratorException>(() => s.Orchestrator.StopAsync(ComponentRef.PreSq(9), CancellationToken.None));
    }

    [Fact]
    public async Task A_process_that_exits_while_starting_is_a_failure_with_its_exit_code()
    {
        await using var s = new SleepProcesses(new Dictionary<ComponentRef, IReadOnlyList<string>> { [ComponentRef.PreSq(3)] = ["sh", "-c", "exit 3"] }, healthy: false);
        var e = await Assert.ThrowsAsync<OrchestratorException>(() => s.Orchestrator.StartAsync(ComponentRef.PreSq(3), CancellationToken.None));
        Assert.Contains("exited with code 3", e.Message, StringComparison.Ordinal);
        Assert.Empty(s.Processes.Names);
    }

    [Fact]
    public async Task A_process_that_ended_by_itself_is_started_again()
    {
        await using var s = new SleepProcesses(new Dictionary<ComponentRef, IReadOnlyList<string>> { [ComponentRef.PreSq(4)] = ["sleep", "1"] });
        await s.Orchestrator.StartAsync(ComponentRef.PreSq(4), CancellationToken.None);
        var first = s.Processes.Get("pre-sq-4")!;
        await first.WaitForExitAsync();
        Assert.StartsWith("started pid ", await s.Orchestrator.StartAsync(ComponentRef.PreSq(4), CancellationToken.None), StringComparison.Ordinal);
        Assert.Equal(["pre-sq-4"], s.Processes.Names);
    }

    [Fact]
    public async Task A_process_never_healthy_is_stopped_again_at_the_timeout()
    {
        await using var s = new SleepProcesses(new Dictionary<ComponentRef, IReadOnlyList<string>> { [ComponentRef.PreSq(5)] = ["sleep", "300"] }, healthy: false);
        var e = await Assert.ThrowsAsync<OrchestratorException>(() => s.Orchestrator.StartAsync(ComponentRef.PreSq(5), CancellationToken.None));
        Assert.Contains("not healthy within 5 s and was stopped again", e.Message, StringComparison.Ordinal);
        Assert.Empty(s.Processes.Names);
    }
}
