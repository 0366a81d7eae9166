using SieveQ.Transport;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary>StartPreSq, StopPreSq and ReplacePreSq over real HTTP/2 with a real orchestrator: the administrator only, every step audited.</summary>
public sealed class PreSqLifecycleCallTests
{
    [Fact]
    public async Task The_administrator_stops_starts_and_replaces_a_pre_sq_and_each_step_is_audited_with_the_key()
    {
        await using var processes = new SleepProcesses(1);
        await using var f = await ControllerFixture.StartAsync(orchestrator: processes.Orchestrator);
        using var admin = f.Client(f.Administrator);

        var started = await admin.PreSqLifecycleAsync(ControllerNames.StartPreSq, 1, "first start");
        Assert.True(started.Applied, started.Status);
        var first = processes.Pid(1);
        var replaced = await admin.PreSqLifecycleAsync(ControllerNames.ReplacePreSq, 1, "suspected by hand");
        Assert.True(replaced.Applied, replaced.Status);
        Assert.NotEqual(first, processes.Pid(1));
        var stopped = await admin.PreSqLifecycleAsync(ControllerNames.StopPreSq, 1, "");
        Assert.True(stopped.Applied, stopped.Status);
        Assert.Null(processes.Pid(1));

        var records = f.Host.Audit.Tail(50).Where(r => r.Actor == $"key {admin.KeyId} (alice, administrator) from 127.0.0.1").ToList();
        Assert.Equal(["start-pre-sq", "start-pre-sq", "replace-pre-sq", "replace-pre-sq", "replace-pre-sq", "stop-pre-sq", "stop-pre-sq"], records.Select(r => r.Action));
        Assert.Equal("pre-SQ 1 (reason: suspected by hand)", records[2].Target);
        Assert.Equal(replaced.AuditSequence, records[4].Sequence);
        Assert.StartsWith("replaced: started pid ", records[4].Outcome, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Operator_and_viewer_are_refused_and_the_refusal_is_audited_and_nothing_moves()
    {
        await using var processes = new SleepProcesses(1);
        await processes.Orchestrator.StartAsync(Controller.Orchestration.ComponentRef.PreSq(1), CancellationToken.None);
        var pid = processes.Pid(1);
        await using var f = await ControllerFixture.StartAsync(orchestrator: processes.Orchestrator);
        foreach (var key in new[] { f.Operator, f.Viewer })
        {
            using var client = f.Client(key);
            foreach (var method in new[] { ControllerNames.StartPreSq, ControllerNames.StopPreSq, ControllerNames.ReplacePreSq })
            {
                var e = await Assert.ThrowsAsync<GrpcCallException>(() => client.PreSqLifecycleAsync(method, 1, "let me"));
                Assert.Equal(GrpcStatusCode.PermissionDenied, e.Status);
            }
        }
        Assert.Equal(pid, processes.Pid(1));
        var refusals = f.Host.Audit.Tail(50).Where(r => r.Outcome.StartsWith("refused: role ", StringComparison.Ordinal)).ToList();
        Assert.Equal(6, refusals.Count);
        Assert.All(refusals, r => Assert.EndsWith("is below administrator", r.Outcome, StringComparison.Ordinal));
        Assert.Equal(["start-pre-sq", "stop-pre-sq", "replace-pre-sq"], refusals.Take(3).Select(r => r.Action));
    }

    [Fact]
    public async Task Without_an_orchestrator_the_call_is_recorded_and_not_claimed_done()
    {
        await using var f = await ControllerFixture.StartAsync();
        using var admin = f.Client(f.Administrator);
        var reply = await admin.PreSqLifecycleAsync(ControllerNames.ReplacePreSq, 4, "");
        Assert.False(reply.Applied);
        Assert.Equal(Controller.Orchestration.AuditedOrchestration.NoOrchestrator, reply.Status);
        Assert.Equal("replace-pre-sq", Assert.Single(f.Host.Audit.Tail(50), r => r.Sequence == reply.AuditSequence).Action);
    }
}
