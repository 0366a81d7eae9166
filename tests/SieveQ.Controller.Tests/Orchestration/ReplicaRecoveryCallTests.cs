using SieveQ.Controller.Orchestration;
using SieveQ.Transport;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary>
/// RecoverReplica and RecoverReplicas over real HTTP/2 with a real orchestrator of real processes: a replica is
/// restarted only while 2f+1 others are healthy, the recovery ends once it has caught up, a round goes one replica at
/// a time with the leader last and stops at the first failure, and only the administrator may ask.
/// </summary>
public sealed class ReplicaRecoveryCallTests
{
    private static readonly ControllerHostOptions Quick = new()
    {
        Recovery = new ReplicaRecoveryOptions { CatchUpTimeout = TimeSpan.FromSeconds(3), QuorumWait = TimeSpan.FromSeconds(2), PollInterval = TimeSpan.FromMilliseconds(50) },
    };

    private static async Task<(ScriptedReplicas Replicas, ControllerFixture Fixture)> StartAsync(ControllerHostOptions? options = null)
    {
        var replicas = new ScriptedReplicas();
        await replicas.StartAllAsync();
        return (replicas, await ControllerFixture.StartAsync(orchestrator: replicas.Sleeps.Orchestrator, replicas: replicas, options: options ?? Quick));
    }

    [Fact]
    public async Task A_replica_is_restarted_and_the_recovery_ends_once_it_has_caught_up_each_step_audited()
    {
        var (replicas, f) = await StartAsync();
        await using var _ = replicas;
        await using var __ = f;
        using var admin = f.Client(f.Administrator);
        var reads = 0;
        // The fresh process starts behind and catches up over a few readings, as a state transfer does.
        replicas.AfterRestart = _ => ++reads < 5 ? 400 + (reads * 100) : replicas.Decided;

        var reply = await admin.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, 2, "proactive");

        Assert.True(reply.Applied, reply.Status);
        Assert.True(replicas.Restarted(2));
        Assert.False(replicas.Restarted(0) || replicas.Restarted(1) || replicas.Restarted(3));
        Assert.StartsWith("recovered: started pid ", reply.Status, StringComparison.Ordinal);
        Assert.Contains("caught up: decided up to 1000 (the others were at 1000), 4 healthy replicas all linked", reply.Status, StringComparison.Ordinal);
        Assert.True(reads >= 5, $"the recovery ended after {reads} readings of the fresh process, before it had caught up");
        var records = f.Host.Audit.Tail(50).Where(r => r.Action == "recover-replica").ToList();
        Assert.Collection(records,
            r => Assert.Equal("stopping through local processes", r.Outcome),
            r => Assert.StartsWith("stopped (stopped (pid ", r.Outcome, StringComparison.Ordinal),
            r => Assert.StartsWith("started (started pid ", r.Outcome, StringComparison.Ordinal),
            r => Assert.StartsWith("recovered: started pid ", r.Outcome, StringComparison.Ordinal));
        Assert.All(records, r => Assert.Equal("replica-SQ 2 (reason: proactive)", r.Target));
        Assert.Equal(reply.AuditSequence, records[^1].Sequence);
    }

    [Fact]
    public async Task The_recovery_waits_until_every_peer_has_redialled_the_fresh_process()
    {
        var (replicas, f) = await StartAsync(Quick with { Recovery = Quick.Recovery with { CatchUpTimeout = TimeSpan.FromMinutes(2) } });
        await using var _ = replicas;
        await using var __ = f;
        using var admin = f.Client(f.Administrator);
        // Replica 0 has not redialled replica 3 yet: its proposals would not reach the fresh process.
        replicas.LinksMissing[0] = 1;

        var recovering = admin.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, 3, "");
        await WaitUntilAsync(() => replicas.Restarted(3));
        await Task.Delay(500);
        Assert.False(recovering.IsCompleted, "the recovery ended while replica-sq-0 had no link to the fresh replica-sq-3");
        replicas.LinksMissing.Clear();
        var reply = await recovering;

        Assert.True(reply.Applied, reply.Status);
    }

    [Fact]
    public async Task A_recovery_whose_peers_never_redial_fails_and_names_them()
    {
        var (replicas, f) = await StartAsync();
        await using var _ = replicas;
        await using var __ = f;
        using var admin = f.Client(f.Administrator);
        replicas.LinksMissing[2] = 1;

        var reply = await admin.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, 1, "");

        Assert.False(reply.Applied);
        Assert.EndsWith("links not all up: replica-sq-2 has 2", reply.Status, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_replica_is_not_restarted_while_fewer_than_2f_plus_1_others_are_healthy()
    {
        var (replicas, f) = await StartAsync();
        await using var _ = replicas;
        await using var __ = f;
        using var admin = f.Client(f.Administrator);
        replicas.Unhealthy[1] = "ordering links to 1 other replicas, 2 needed";
        var pid = replicas.Pid(2);

        var reply = await admin.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, 2, "");

        Assert.False(reply.Applied);
        Assert.Equal("refused: 2 of the 3 other replica-SQs are healthy, 3 needed to order on while replica-sq-2 restarts (replica-sq-1: ordering links to 1 other replicas, 2 needed)",
            reply.Status);
        Assert.Equal(pid, replicas.Pid(2));
        Assert.Equal(reply.Status, Assert.Single(f.Host.Audit.Tail(50), r => r.Sequence == reply.AuditSequence).Outcome);
    }

    [Fact]
    public async Task A_round_recovers_every_replica_one_at_a_time_each_time_the_current_leader_first()
    {
        var (replicas, f) = await StartAsync();
        await using var _ = replicas;
        await using var __ = f;
        using var admin = f.Client(f.Administrator);
        replicas.Regency = 5; // leader 5 mod 4 = replica 1; each replaced leader moves the regency on by one

        var reply = await admin.RecoverReplicasAsync("weekly round");

        Assert.True(reply.Applied, reply.Status);
        Assert.StartsWith("done: recovered replica-sq-1, replica-sq-2, replica-sq-3, replica-sq-0 in ", reply.Status, StringComparison.Ordinal);
        Assert.All(replicas.Replicas, id => Assert.True(replicas.Restarted(id), $"replica-sq-{id} was not restarted"));
        var tail = f.Host.Audit.Tail(100);
        Assert.StartsWith("started: 4 replica-SQs, each time the current leader first",
            tail.First(r => r.Action == "recovery-round").Outcome, StringComparison.Ordinal);
        // One replica at a time: each recovery's first step comes after the previous one's last.
        var recoveries = tail.Where(r => r.Action == "recover-replica").ToList();
        Assert.Equal(16, recoveries.Count);
        Assert.Equal(["replica-SQ 1", "replica-SQ 2", "replica-SQ 3", "replica-SQ 0"],
            recoveries.Chunk(4).Select(c => Assert.Single(c.Select(r => r.Target[..r.Target.IndexOf(" (", StringComparison.Ordinal)]).Distinct())));
        Assert.All(recoveries.Chunk(4), c => Assert.StartsWith("recovered: ", c[^1].Outcome, StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_round_stops_at_the_first_replica_that_does_not_catch_up()
    {
        var (replicas, f) = await StartAsync();
        await using var _ = replicas;
        await using var __ = f;
        using var admin = f.Client(f.Administrator);
        replicas.AfterRestart = id => id == 2 ? 10 : replicas.Decided;
        var pids = replicas.Replicas.ToDictionary(id => id, id => replicas.Pid(id));

        var reply = await admin.RecoverReplicasAsync("");

        Assert.False(reply.Applied);
        Assert.StartsWith("stopped at replica-sq-2 after replica-sq-0, replica-sq-1: failed: not caught up within 3 s: replica-sq-2: decided up to 10 (the others were at 1000)",
            reply.Status, StringComparison.Ordinal);
        Assert.True(replicas.Restarted(0) && replicas.Restarted(1) && replicas.Restarted(2));
        Assert.Equal(pids[3], replicas.Pid(3));
    }

    [Fact]
    public async Task A_second_recovery_while_one_is_under_way_is_refused()
    {
        // The first recovery waits for the test's release, not for a timer.
        var (replicas, f) = await StartAsync(Quick with { Recovery = Quick.Recovery with { CatchUpTimeout = TimeSpan.FromMinutes(2) } });
        await using var _ = replicas;
        await using var __ = f;
        using var admin = f.Client(f.Administrator);
        var release = new TaskCompletionSource();
        replicas.AfterRestart = _ => release.Task.IsCompleted ? replicas.Decided : 0;

        var first = admin.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, 0, "");
        await WaitUntilAsync(() => replicas.Restarted(0));
        var second = await admin.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, 3, "");
        var round = await admin.RecoverReplicasAsync("");
        release.SetResult();

        Assert.True((await first).Applied);
        Assert.False(second.Applied);
        Assert.StartsWith("refused: a replica recovery or round is under way", second.Status, StringComparison.Ordinal);
        Assert.False(round.Applied);
        Assert.False(replicas.Restarted(3));
    }

    [Fact]
    public async Task Operator_viewer_and_a_wrong_id_are_refused_and_nothing_is_restarted()
    {
        var (replicas, f) = await StartAsync();
        await using var _ = replicas;
        await using var __ = f;
        foreach (var key in new[] { f.Operator, f.Viewer })
        {
            using var client = f.Client(key);
            foreach (var call in new Func<Task>[]
            {
                () => client.ReplicaLifecycleAsync(ControllerNames.StartReplica, 1, "let me"),
                () => client.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, 1, "let me"),
                () => client.RecoverReplicasAsync("let me"),
            })
            {
                var e = await Assert.ThrowsAsync<GrpcCallException>(call);
                Assert.Equal(GrpcStatusCode.PermissionDenied, e.Status);
            }
        }
        using var admin = f.Client(f.Administrator);
        var wrong = await Assert.ThrowsAsync<GrpcCallException>(() => admin.ReplicaLifecycleAsync(ControllerNames.RecoverReplica, 4, ""));
        Assert.Equal(GrpcStatusCode.InvalidArgument, wrong.Status);
        Assert.Contains("no replica-SQ 4", wrong.Message, StringComparison.Ordinal);
        Assert.All(replicas.Replicas, id => Assert.False(replicas.Restarted(id)));
        var refusals = f.Host.Audit.Tail(50).Where(r => r.Outcome.StartsWith("refused: role ", StringComparison.Ordinal)).ToList();
        Assert.Equal(["start-replica", "recover-replica", "recovery-round"], refusals.Take(3).Select(r => r.Action));
        Assert.Equal(6, refusals.Count);
    }

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        for (var i = 0; i < 200 && !condition(); i++)
        {
            await Task.Delay(50);
        }
        Assert.True(condition());
    }
}
