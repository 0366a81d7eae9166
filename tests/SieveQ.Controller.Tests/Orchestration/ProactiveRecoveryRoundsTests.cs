using Microsoft.Extensions.Time.Testing;
using SieveQ.Controller.Orchestration;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary>controller.json's recoveryRoundEveryMinutes: a round at each interval of the controller's clock, none before, the controller as the actor.</summary>
public sealed class ProactiveRecoveryRoundsTests
{
    [Fact]
    public async Task A_round_runs_when_the_interval_has_passed_and_not_before_with_the_controller_as_its_actor()
    {
        var replicas = new ScriptedReplicas();
        await using var _ = replicas;
        await replicas.StartAllAsync();
        var clock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        var options = new ControllerHostOptions
        {
            Time = clock,
            RecoveryRoundEvery = TimeSpan.FromMinutes(30),
            Recovery = new ReplicaRecoveryOptions { CatchUpTimeout = TimeSpan.FromSeconds(30), QuorumWait = TimeSpan.FromSeconds(5), PollInterval = TimeSpan.FromMilliseconds(50) },
        };
        await using var f = await ControllerFixture.StartAsync(orchestrator: replicas.Sleeps.Orchestrator, replicas: replicas, options: options);
        var rounds = f.Host.ProactiveRounds!;

        clock.Advance(TimeSpan.FromMinutes(29));
        await Task.Delay(300);
        Assert.Equal(0, rounds.Started);
        Assert.DoesNotContain(replicas.Replicas, replicas.Restarted);

        // The loop may not have armed its timer when the clock moved: move it on until the round starts, then no further.
        for (var i = 0; i < 100 && rounds.Started == 0; i++)
        {
            clock.Advance(TimeSpan.FromMinutes(1));
            await Task.Delay(50);
        }
        Assert.Equal(1, rounds.Started);
        var done = await AuditRecordOfAsync(f, "done: recovered ");
        Assert.All(replicas.Replicas, id => Assert.True(replicas.Restarted(id), $"replica-sq-{id} was not restarted"));
        Assert.Equal("controller (proactive recovery round every 30 min)", done.Actor);
        Assert.Equal("every replica-SQ (proactive round)", done.Target);
    }

    /// <summary>The round's closing record, once it is there (a bound on waiting: the round restarts four processes).</summary>
    private static async Task<Audit.AuditRecord> AuditRecordOfAsync(ControllerFixture f, string outcome)
    {
        for (var i = 0; i < 600; i++)
        {
            if (f.Host.Audit.Tail(100).FirstOrDefault(r => r.Action == "recovery-round" && r.Outcome.StartsWith(outcome, StringComparison.Ordinal)) is { } record)
            {
                return record;
            }
            await Task.Delay(50);
        }
        throw new Xunit.Sdk.XunitException($"no recovery-round record starting '{outcome}': " + string.Join(" | ", f.Host.Audit.Tail(20).Select(r => $"{r.Action}: {r.Outcome}")));
    }
}
