using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Orchestration;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary><see cref="PreSqReplacement"/> without an orchestrator, and with one that fails (f+1 and once are the tally's: ReplicaNoticeTallyTests).</summary>
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

    private PreSqReplacement Replacement(IComponentOrchestrator? orchestrator) =>
        new(new AuditedOrchestration(orchestrator, _audit), new ReplacementBudget(), NullLogger.Instance);

    private static Task<OrchestrationOutcome> SuspectedAsync(PreSqReplacement replacement, int preSq) =>
        replacement.ReplaceAsync(ComponentRef.PreSq(preSq), "f+1 replicas [0, 1]", $"pre-sq {preSq} (decided at agreed time 100)");

    [Fact]
    public async Task Without_an_orchestrator_the_decision_is_recorded_as_not_carried_out()
    {
        await using var replacement = Replacement(null);
        var outcome = await SuspectedAsync(replacement, 2);
        Assert.True(outcome is { Done: false });
        var record = Assert.Single(_audit.Tail(1000));
        Assert.Equal(("f+1 replicas [0, 1]", "replace-pre-sq", AuditedOrchestration.NoOrchestrator), (record.Actor, record.Action, record.Outcome));
        Assert.StartsWith("recorded, not carried out", replacement.Intent(ComponentRef.PreSq(2)), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_failed_start_is_recorded_as_failed()
    {
        await using var broken = new SleepProcesses(new Dictionary<ComponentRef, IReadOnlyList<string>> { [ComponentRef.PreSq(6)] = ["sh", "-c", "exit 4"] }, healthy: false);
        await using var replacement = Replacement(broken.Orchestrator);
        var outcome = await SuspectedAsync(replacement, 6);
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
