using System.Diagnostics;
using SieveQ.Bft.Hosting.Replica;
using Xunit.Abstractions;

namespace SieveQ.Bft.ProcessTests;

public sealed class ReplicaFaultTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Step = TimeSpan.FromSeconds(30);

    /// <summary>
    /// kill -9 a follower mid-load, restart it and watch it catch up by state transfer, then kill -9 the
    /// leader: the client sees every request complete exactly once, with the execution indices 1..N (nothing
    /// lost, nothing executed twice), and the surviving replicas end with the same state.
    /// </summary>
    [Fact]
    public async Task KilledFollowerThenLeaderLoseAndDuplicateNothing()
    {
        await using var cluster = new ProcessCluster(durability: false);
        cluster.StartAll();
        await cluster.WaitMeshAsync([0, 1, 2, 3], Step);
        var client = await cluster.ClientAsync(0);
        await using var load = new LoadRecorder(client, concurrency: 8);
        await load.WaitForAsync(200, Step, cluster, "warm-up");

        var leader = (await cluster.WaitForAsync(() => cluster.Status(0), Step, "status")).Leader;
        var follower = (leader + 1) % cluster.N;
        output.WriteLine($"leader {leader}; killing follower {follower} at {load.Count} completed");
        cluster.Kill(follower);
        await load.WaitForAsync(load.Count + 300, Step, cluster, "progress without the follower");

        cluster.Start(follower);
        var target = cluster.LiveStatuses().Max(s => s.LastDecided);
        var caughtUp = await cluster.WaitForAsync(() => cluster.Status(follower) is { LastDecided: var d } s && d >= target ? s : null, Step, $"replica {follower} to reach instance {target}");
        var transfer = caughtUp.CoreCounters.Where(kv => kv.Key.StartsWith("state-transfer.", StringComparison.Ordinal)).ToList();
        output.WriteLine($"replica {follower} restarted and reached {caughtUp.LastDecided} (target {target}); {string.Join(", ", transfer.Select(kv => $"{kv.Key}={kv.Value}"))}");
        // It restarted empty (durability off) behind a checkpoint: only state from the others can have moved it.
        Assert.True(caughtUp.CoreCounters.GetValueOrDefault("state-transfer.checkpoint-installed") >= 1, "the restarted replica should catch up by state transfer");

        // Timeouts on a loaded machine may already have moved the regency on while the follower was away:
        // the leader to kill is the one the live replicas agree on now, not the one the test began with.
        var current = await cluster.WaitForAsync(() =>
        {
            var live = cluster.LiveStatuses();
            return live.Count == cluster.N && live.All(s => s.Mode == "Normal" && s.Regency == live[0].Regency && s.Leader == live[0].Leader) ? live[0] : null;
        }, Step, "the four replicas to agree on the current regency");
        (leader, var regency) = (current.Leader, current.Regency);
        output.WriteLine($"killing leader {leader} (regency {regency}) at {load.Count} completed");
        cluster.Kill(leader);
        var installed = await cluster.WaitForAsync(() =>
        {
            var live = cluster.LiveStatuses();
            return live.Count == 3 && live.All(s => s.Regency > regency && s.Mode == "Normal" && s.Leader != leader) ? live : null;
        }, Step, "a new regency without the killed leader");
        output.WriteLine($"new regency {installed[0].Regency}, leader {installed[0].Leader}");
        await load.WaitForAsync(load.Count + 300, Step, cluster, "progress under the new leader");

        await load.StopAsync(Step);
        AssertExactlyOnce(load);
        var final = await AgreeOnOneStateAsync(cluster, load, replicas: 3);
        output.WriteLine($"{load.Count} requests, final state {final[0].AppState} on replicas {string.Join(",", final.Select(s => s.Id))}");
    }

    /// <summary>A SIGSTOPped leader is replaced within the configured bound (silence time-out + sync time-out + slack).</summary>
    [Fact]
    public async Task StoppedLeaderIsReplacedWithinTheBound()
    {
        await using var cluster = new ProcessCluster(durability: false);
        cluster.StartAll();
        await cluster.WaitMeshAsync([0, 1, 2, 3], Step);
        var client = await cluster.ClientAsync(0);
        await using var load = new LoadRecorder(client, concurrency: 4);
        await load.WaitForAsync(100, Step, cluster, "warm-up");
        var before = await cluster.WaitForAsync(() => cluster.Status(0), Step, "status");
        var leader = before.Leader;
        var p = ProcessCluster.FastProtocol;
        var bound = TimeSpan.FromMilliseconds(p.LeaderSilenceTimeoutMs + p.RequestTimeoutMs + p.SyncTimeoutMs + 1_500);

        await cluster.PauseAsync(leader);
        var sw = Stopwatch.StartNew();
        var others = Enumerable.Range(0, cluster.N).Where(i => i != leader).ToList();
        var replaced = await cluster.WaitForAsync(() =>
        {
            var s = others.Select(cluster.Status).ToList();
            return s.All(x => x is { Mode: "Normal" } && x.Regency > before.Regency && x.Leader != leader) ? s : null;
        }, Step, "a new regency");
        var took = sw.Elapsed;
        output.WriteLine($"leader {leader} stopped; regency {replaced[0]!.Regency} with leader {replaced[0]!.Leader} installed after {took.TotalMilliseconds:F0} ms (bound {bound.TotalMilliseconds:F0} ms)");
        Assert.True(took <= bound, $"new regency took {took.TotalMilliseconds:F0} ms, bound {bound.TotalMilliseconds:F0} ms");
        await load.WaitForAsync(load.Count + 100, Step, cluster, "progress under the new leader");

        await cluster.ResumeAsync(leader);
        await load.StopAsync(Step);
        AssertExactlyOnce(load);
    }

    /// <summary>
    /// With durability on, kill -9 every replica mid-load and restart them all: every request acknowledged
    /// before the crash is still executed exactly once, no replica's decided instance goes back, and
    /// requests in flight at the crash complete after the restart.
    /// </summary>
    [Fact]
    public async Task FullClusterRestartWithDurabilityLosesNoDecidedBatch()
    {
        await using var cluster = new ProcessCluster(durability: true);
        cluster.StartAll();
        await cluster.WaitMeshAsync([0, 1, 2, 3], Step);
        var client = await cluster.ClientAsync(0);
        await using var load = new LoadRecorder(client, concurrency: 8);
        await load.WaitForAsync(300, Step, cluster, "load before the crash");

        var decidedBefore = Enumerable.Range(0, cluster.N).Select(i => cluster.Status(i)?.LastDecided ?? 0).ToArray();
        for (var i = 0; i < cluster.N; i++)
        {
            cluster.Kill(i);
        }
        var ackedBeforeCrash = load.Completed.Keys.ToHashSet();
        output.WriteLine($"killed all replicas with {ackedBeforeCrash.Count} requests acknowledged; decided before: {string.Join(",", decidedBefore)}");

        cluster.StartAll();
        await cluster.WaitMeshAsync([0, 1, 2, 3], Step);
        var recovered = Enumerable.Range(0, cluster.N).Select(i => cluster.Status(i)!.LastDecided).ToArray();
        output.WriteLine($"after restart, decided: {string.Join(",", recovered)}");
        for (var i = 0; i < cluster.N; i++)
        {
            Assert.True(recovered[i] >= decidedBefore[i], $"replica {i} went back from instance {decidedBefore[i]} to {recovered[i]}");
        }
        await load.WaitForAsync(ackedBeforeCrash.Count + 300, Step, cluster, "load after the restart");
        await load.StopAsync(Step);

        Assert.Subset(load.Completed.Keys.ToHashSet(), ackedBeforeCrash);
        AssertExactlyOnce(load);
        var final = await AgreeOnOneStateAsync(cluster, load, replicas: 4);
        output.WriteLine($"{load.Count} requests, final state {final[0].AppState}");
    }

    /// <summary>
    /// kill -9 all four replicas at once, three times, at random points under load (the points come from a seed
    /// printed in the output), and restart them: no replica's decided instance goes back, ordering resumes
    /// within <see cref="MaxRegencyChangesToResume"/> regency changes of the one before the kill, every request
    /// completes exactly once (execution indices 1..N: nothing acknowledged was lost), and the replicas end with
    /// one state, the hash of one history.
    /// </summary>
    [Fact]
    public async Task RepeatedWholeClusterKillsLoseNothingAndResumeWithinTheBound()
    {
        var seed = Environment.TickCount & 0x7fffffff;
        var rng = new Random(seed);
        output.WriteLine($"kill points drawn from seed {seed}");
        await using var cluster = new ProcessCluster(durability: true);
        cluster.StartAll();
        await cluster.WaitMeshAsync([0, 1, 2, 3], Step);
        var client = await cluster.ClientAsync(0);
        await using var load = new LoadRecorder(client, concurrency: 8);
        await load.WaitForAsync(200, Step, cluster, "warm-up");
        for (var round = 1; round <= 3; round++)
        {
            await Task.Delay(rng.Next(50, 1_500));
            var before = Enumerable.Range(0, cluster.N).Select(i => cluster.Status(i)).ToArray();
            var regencyBefore = before.Max(s => s?.Regency ?? 0);
            for (var i = 0; i < cluster.N; i++)
            {
                cluster.Kill(i);
            }
            cluster.StartAll();
            var sw = Stopwatch.StartNew();
            // Replies that reached the client just before the kill may still complete requests; count from the
            // moment every restarted replica has reported its recovered state.
            var recovered = await cluster.WaitForAsync(() => cluster.LiveStatuses() is { Count: 4 } l ? l : null, Step, "every restarted replica to report");
            var acked = load.Count;
            await load.WaitForAsync(acked + 10, Step, cluster, $"completions after whole-cluster kill {round}");
            var resumedAfter = sw.Elapsed;
            await Task.Delay(300);
            var after = cluster.LiveStatuses();
            Assert.Equal(4, after.Count);
            foreach (var s in recovered)
            {
                var was = before[s.Id]?.LastDecided ?? 0;
                Assert.True(s.LastDecided >= was, $"replica {s.Id} recovered at instance {s.LastDecided}, below the {was} it had decided");
            }
            var regencyAfter = after.Max(s => s.Regency);
            output.WriteLine($"kill {round}: {acked} acknowledged; ordering again {resumedAfter.TotalMilliseconds:F0} ms after the restart; regency {regencyBefore} -> {regencyAfter}; decided {string.Join(",", before.Select(s => s?.LastDecided ?? 0))} -> {string.Join(",", after.Select(s => s.LastDecided))}");
            foreach (var s in after)
            {
                var was = before[s.Id]?.LastDecided ?? 0;
                Assert.True(s.LastDecided >= was, $"replica {s.Id} went back from instance {was} to {s.LastDecided}");
            }
            Assert.True(regencyAfter - regencyBefore <= MaxRegencyChangesToResume,
                $"ordering resumed only after {regencyAfter - regencyBefore} regency changes (bound {MaxRegencyChangesToResume})");
            await load.WaitForAsync(load.Count + 200, Step, cluster, $"load after whole-cluster kill {round}");
        }
        await load.StopAsync(Step);
        AssertExactlyOnce(load);
        var final = await AgreeOnOneStateAsync(cluster, load, replicas: 4);
        output.WriteLine($"{load.Count} requests, final state {final[0].AppState}");
    }

    /// <summary>
    /// A restarted replica asks for the next regency at once (it may not WRITE in the one it recovered into),
    /// so a whole-cluster restart normally resumes after one change; replicas that come up seconds apart on a
    /// loaded machine may let a SYNC time out once or twice more.
    /// </summary>
    private const int MaxRegencyChangesToResume = 4;

    /// <summary>
    /// A SIGSTOPped follower (with durability on) must not stall the others nor make their memory grow
    /// without bound (their queues towards it are bounded); once resumed it catches up. Then it is killed
    /// with -9 and restarted, and recovers from its write-ahead log plus the others.
    /// </summary>
    [Fact]
    public async Task PausedThenCrashedFollowerRecoversWhileOthersStayBounded()
    {
        await using var cluster = new ProcessCluster(durability: true);
        cluster.StartAll();
        await cluster.WaitMeshAsync([0, 1, 2, 3], Step);
        var client = await cluster.ClientAsync(0);
        await using var load = new LoadRecorder(client, concurrency: 16);
        await load.WaitForAsync(200, Step, cluster, "warm-up");
        var leader = (await cluster.WaitForAsync(() => cluster.Status(0), Step, "status")).Leader;
        var follower = (leader + 2) % cluster.N;
        var others = Enumerable.Range(0, cluster.N).Where(i => i != follower).ToList();

        await cluster.PauseAsync(follower);
        var rssBefore = others.Max(cluster.ResidentMegabytes);
        await load.WaitForAsync(load.Count + 2_000, Step, cluster, "progress while a follower is stopped");
        var rssAfter = others.Max(cluster.ResidentMegabytes);
        output.WriteLine($"follower {follower} stopped: {load.Count} completed; largest RSS of the others {rssBefore} MB -> {rssAfter} MB");
        Assert.True(rssAfter < 1_024, $"a replica grew to {rssAfter} MB while a peer was stopped");

        await cluster.ResumeAsync(follower);
        var target = others.Select(i => cluster.Status(i)?.LastDecided ?? 0).Max();
        await cluster.WaitForAsync(() => cluster.Status(follower) is { LastDecided: var d } s && d >= target ? s : null, Step, $"resumed replica {follower} to reach {target}");

        cluster.Kill(follower);
        await load.WaitForAsync(load.Count + 300, Step, cluster, "progress without the follower");
        cluster.Start(follower);
        target = others.Select(i => cluster.Status(i)?.LastDecided ?? 0).Max();
        var back = await cluster.WaitForAsync(() => cluster.Status(follower) is { LastDecided: var d } s && d >= target ? s : null, Step, $"restarted replica {follower} to reach {target}");
        output.WriteLine($"replica {follower} restarted from its log and reached {back.LastDecided} (target {target})");

        await load.StopAsync(Step);
        AssertExactlyOnce(load);
        await AgreeOnOneStateAsync(cluster, load, replicas: 4);
    }

    /// <summary>Waits until that many live replicas report one state holding every completed request (one history).</summary>
    private static Task<IReadOnlyList<ReplicaStatus>> AgreeOnOneStateAsync(ProcessCluster cluster, LoadRecorder load, int replicas) =>
        cluster.WaitForAsync(() =>
        {
            var live = cluster.LiveStatuses();
            return live.Count == replicas && live.All(s => s.AppState == live[0].AppState && s.AppState.StartsWith($"{load.Count}:", StringComparison.Ordinal)) ? live : null;
        }, Step, $"{replicas} live replicas to agree on a state with {load.Count} executed requests");

    private static void AssertExactlyOnce(LoadRecorder load)
    {
        Assert.Equal(0, load.DuplicateCompletions);
        Assert.Equal(load.Submitted, load.Count);
        // One client, so the benchmark app numbers exactly our requests: 1..N means none lost, none twice.
        Assert.Equal(Enumerable.Range(1, load.Count).Select(i => (long)i), load.ExecutionIndices());
    }
}
