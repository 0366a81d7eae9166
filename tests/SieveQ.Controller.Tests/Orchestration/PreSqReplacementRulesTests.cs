using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Orchestration;
using SieveQ.Controller.Replicas;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary><see cref="PreSqReplacement"/>'s own checks, behind the tally's: never on fewer than f+1 distinct replicas, once per notice.</summary>
public sealed class PreSqReplacementRulesTests : IAsyncLifetime
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-controller-" + Guid.NewGuid().ToString("N"));
    private readonly SleepProcesses _processes = new(2);
    private AuditLog _audit = null!;

    public async Task InitializeAsync()
    {
        _audit = AuditLog.Open(_dir);
        await _processes.Orchestrator.StartAsync(ComponentRef.PreSq(2), CancellationToken.None);
    }

    private PreSqReplacement Replacement(IComponentOrchestrator? orchestrator, int f = 1) =>
        new(new AuditedOrchestration(orchestrator, _audit), new ReplacementBudget(), f, NullLogger.Instance);

    private static ReplicaNotice Suspected(uint preSq, long at = 100) => new(ReplicaNoticeActions.RemovePreSq, preSq, at);

    [Fact]
    public async Task Fewer_than_f_plus_one_distinct_replicas_never_act_even_when_repeated()
    {
        var pid = _processes.Pid(2);
        await using var replacement = Replacement(_processes.Orchestrator, f: 2);
        Assert.Null(await replacement.ReplaceAsync(Suspected(2), [1, 1, 3, 3]));
        Assert.Null(await replacement.ReplaceAsync(Suspected(2), [0]));
        Assert.Equal(pid, _processes.Pid(2));
        Assert.Empty(_audit.Tail(1000));
    }

    [Fact]
    public async Task The_same_notice_acts_once_and_another_action_not_at_all()
    {
        await using var replacement = Replacement(_processes.Orchestrator);
        var first = await replacement.ReplaceAsync(Suspected(2), [0, 3]);
        Assert.True(first is { Done: true });
        var pid = _processes.Pid(2);
        Assert.Null(await replacement.ReplaceAsync(Suspected(2), [1, 2]));
        Assert.Null(await replacement.ReplaceAsync(new ReplicaNotice(ReplicaNoticeActions.AddPreSq, 2, 200), [0, 1]));
        Assert.Equal(pid, _processes.Pid(2));
        Assert.Equal(3, _audit.Tail(1000).Count);
    }

    [Fact]
    public async Task Without_an_orchestrator_the_decision_is_recorded_as_not_carried_out()
    {
        await using var replacement = Replacement(null);
        var outcome = await replacement.ReplaceAsync(Suspected(2), [0, 1]);
        Assert.True(outcome is { Done: false });
        var record = Assert.Single(_audit.Tail(1000));
        Assert.Equal(("f+1 replicas [0, 1]", "replace-pre-sq", AuditedOrchestration.NoOrchestrator), (record.Actor, record.Action, record.Outcome));
        Assert.StartsWith("recorded, not carried out", replacement.Intent(2), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_failed_start_is_recorded_as_failed()
    {
        await using var broken = new SleepProcesses(new Dictionary<ComponentRef, IReadOnlyList<string>> { [ComponentRef.PreSq(6)] = ["sh", "-c", "exit 4"] }, healthy: false);
        await using var replacement = Replacement(broken.Orchestrator);
        var outcome = await replacement.ReplaceAsync(Suspected(6), [0, 1]);
        Assert.True(outcome is { Done: false });
        Assert.StartsWith("failed: pre-sq-6 (pid ", _audit.Tail(1)[0].Outcome, StringComparison.Ordinal);
        Assert.Contains("exited with code 4", _audit.Tail(1)[0].Outcome, StringComparison.Ordinal);
    }

    public async Task DisposeAsync()
    {
        await _audit.DisposeAsync();
        await _processes.DisposeAsync();
        Directory.Delete(_dir, recursive: true);
    }
}
