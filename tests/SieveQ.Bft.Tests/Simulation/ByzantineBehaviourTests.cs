using SieveQ.Bft.Simulation;

namespace SieveQ.Bft.Tests.Simulation;

/// <summary>
/// Each Byzantine behaviour is actually exercised (the wrapper acted and the correct replicas
/// noticed and counted it), and the cluster stays safe and live through it.
/// </summary>
public class ByzantineBehaviourTests
{
    private static List<SimulationResult> Run(string behaviour, int seeds = 12, int replicas = 4) =>
        SimulationAssert.AllPass(behaviour, replicas, SimulationAssert.Seeds(1, seeds));

    [Fact]
    public void Requests_forged_in_a_clients_name_never_reach_a_correct_core()
    {
        var runs = Run("forge-requests", seeds: 24);
        Assert.True(runs.Sum(s => s.CountersWithPrefix("byz.forge-request.")) > 0);
        Assert.True(runs.Sum(s => s.Counter("byz.forge-request.propose")) > 0, "the forger never led with a forged proposal");
        Assert.True(runs.Sum(s => s.Counter("host.bad-nested-request")) > 0);
        var forgingLeader = runs.Where(r => r.Stats.Counter("byz.forge-request.propose") > 0).ToList();
        Assert.All(forgingLeader, r => Assert.True(r.Stats.RegencyChanges >= 1, $"seed {r.Seed} kept a leader whose proposals carried forged requests"));
    }

    [Fact]
    public void Without_the_proof_check_a_forging_replica_gets_requests_executed_that_no_client_sent()
    {
        // The same seeds with hosts that take any proof: what the check above prevents actually happens.
        var profile = SieveQ.Bft.Simulation.Faults.FaultProfile.Parse("forge-requests");
        var failures = SimulationAssert.Seeds(1, 24).AsParallel()
            .Select(s => SimulationRun.Execute(s, profile, 4, null, checkRequestProofs: false))
            .Where(r => !r.Passed).ToList();
        Assert.Contains(failures, f => f.Failure!.Contains("validity", StringComparison.Ordinal));
    }

    [Fact]
    public void Forged_signatures_are_dropped_by_the_hosts_precheck()
    {
        var runs = Run("forge-signatures");
        Assert.True(runs.Sum(s => s.CountersWithPrefix("byz.forge.")) > 0);
        Assert.True(runs.Sum(s => s.Counter("host.bad-signature")) > 0);
    }

    [Fact]
    public void Bad_timestamp_proposals_are_refused_and_the_leader_replaced()
    {
        var runs = Run("bad-timestamps");
        Assert.True(runs.Sum(s => s.CountersWithPrefix("byz.bad-timestamp.")) > 0);
        Assert.True(runs.Sum(s => s.CoreCountersWithPrefix("drop.propose.timestamp-")) > 0);
        var byzantineFirstLeader = runs.Where(r => r.Stats.ByzantineReplicas.Contains(0) && r.Stats.CountersWithPrefix("byz.bad-timestamp.") > r.Stats.Counter("byz.bad-timestamp.honest")).ToList();
        Assert.NotEmpty(byzantineFirstLeader);
        Assert.All(byzantineFirstLeader, r => Assert.True(r.Stats.RegencyChanges >= 1, $"seed {r.Seed} kept its lying leader"));
    }

    [Fact]
    public void A_censoring_leader_is_replaced_and_its_victim_served()
    {
        var runs = Run("censor");
        Assert.True(runs.Sum(s => s.Counter("byz.censor.hidden")) > 0);
        var censoringLeader = runs.Where(r => r.Stats.ByzantineReplicas.Contains(0)).ToList();
        Assert.NotEmpty(censoringLeader);
        Assert.All(censoringLeader, r =>
        {
            Assert.True(r.Stats.RegencyChanges >= 1, $"seed {r.Seed} kept its censoring leader");
            Assert.True(r.Stats.CoreCounter("complaint.request-timeout") > 0, $"seed {r.Seed}: no request time-out complaint");
        });
    }

    [Fact]
    public void A_silent_leader_is_replaced()
    {
        var runs = Run("silent");
        Assert.True(runs.Sum(s => s.Counter("byz.silent.withheld")) > 0);
        var silentLeader = runs.Where(r => r.Stats.ByzantineReplicas.Contains(0)).ToList();
        Assert.NotEmpty(silentLeader);
        Assert.All(silentLeader, r => Assert.True(r.Stats.RegencyChanges >= 1, $"seed {r.Seed} kept its silent leader"));
    }

    [Fact]
    public void A_slow_leader_is_policed()
    {
        var runs = Run("slow-leader");
        Assert.True(runs.Sum(s => s.Counter("byz.slow-leader.delayed")) > 0);
        Assert.True(runs.Sum(s => s.CoreCounter("complaint.slow-leader") + s.CoreCounter("complaint.request-timeout")) > 0);
    }

    [Fact]
    public void Equivocation_never_splits_the_correct_replicas()
    {
        var runs = Run("equivocate");
        Assert.True(runs.Sum(s => s.Counter("byz.equivocate.proposal")) > 0);
        Assert.True(runs.Sum(s => s.Counter("byz.equivocate.write")) > 0);
    }

    [Fact]
    public void Mutated_frames_and_fields_are_rejected_and_counted()
    {
        var runs = Run("mutate");
        Assert.True(runs.Sum(s => s.Counter("host.malformed-frame")) > 0);
        Assert.True(runs.Sum(s => s.CountersWithPrefix("byz.mutate.field.")) > 0);
        Assert.True(runs.Sum(s => s.Counter("host.bad-signature") + s.Counter("host.sender-not-link")) > 0);
    }

    [Fact]
    public void Bad_stopdata_is_refused_by_the_new_leader()
    {
        var runs = Run("bad-stopdata", seeds: 16);
        Assert.True(runs.Sum(s => s.CountersWithPrefix("byz.bad-stopdata.")) > 0);
        Assert.True(runs.Sum(s => s.CoreCounter("drop.stopdata.bad-justification")) > 0);
    }

    [Fact]
    public void Bad_sync_is_refused_and_the_next_regency_follows()
    {
        var runs = Run("bad-sync", seeds: 16);
        Assert.True(runs.Sum(s => s.CountersWithPrefix("byz.bad-sync.")) > 0);
        Assert.True(runs.Sum(s => s.CoreCounter("drop.sync.bad-justification")) > 0);
        Assert.Contains(runs, r => r.Stats.RegencyChanges >= 2);
        // A SYNC whose prior value (instance X-1) the evidence does not bind is refused as such.
        Assert.True(runs.Sum(s => s.Counter("byz.bad-sync.wrong-prior")) > 0, "no Byzantine leader sent a wrong prior value");
        Assert.True(runs.Sum(s => s.CoreCounter("sync.fault.wrong-prior")) > 0, "no correct replica refused a wrong prior value");
    }

    [Fact]
    public void Replayed_messages_and_requests_never_execute_twice()
    {
        var runs = Run("replay");
        Assert.True(runs.Sum(s => s.Counter("byz.replay.forward")) > 0);
        Assert.True(runs.Sum(s => s.Counter("byz.replay.own")) > 0);
        Assert.True(runs.Sum(s => s.Counter("host.sender-not-link")) > 0);
    }

    [Fact]
    public void A_future_instance_flood_is_dropped_and_starts_no_state_transfer()
    {
        var runs = Run("flood-future");
        Assert.True(runs.Sum(s => s.Counter("byz.flood-future.sent")) > 0);
        Assert.True(runs.Sum(s => s.CoreCountersWithPrefix("drop.write.far-future")) > 0);
        Assert.True(runs.Sum(s => s.CoreCounter("drop.stop.far-future")) > 0);
        // One liar claiming progress is not proof of being behind. (A flooding leader is another
        // matter: its future proposals are real proposals, so it may equivocate and be replaced.)
        var follower = runs.Where(r => !r.Stats.ByzantineReplicas.Contains(0)).ToList();
        Assert.NotEmpty(follower);
        Assert.All(follower, r =>
        {
            Assert.Equal(0, r.Stats.CoreCountersWithPrefix("state-transfer.started"));
            Assert.Equal(0, r.Stats.RegencyChanges);
        });
    }

    [Fact]
    public void A_state_request_flood_is_rate_limited()
    {
        var runs = Run("flood-state");
        Assert.True(runs.Sum(s => s.Counter("byz.flood-state.requests")) > 0);
        Assert.True(runs.Sum(s => s.CoreCounter("drop.state-request.rate-limited")) > runs.Sum(s => s.CoreCounter("state-served.body")));
        Assert.True(runs.Sum(s => s.CoreCounter("drop.state-reply.unsolicited")) > 0);
        Assert.True(runs.Sum(s => s.Counter("byz.flood-state.chunk-requests")) > runs.Sum(s => s.CoreCounter("state-chunk.served") + s.CoreCounter("state-chunk.refused")));
        Assert.True(runs.Sum(s => s.CoreCounter("drop.state-chunk-request.rate-limited")) > 0);
        Assert.True(runs.Sum(s => s.CoreCounter("drop.state-chunk.unsolicited")) > 0);
    }

    [Fact]
    public void Bad_chunks_are_refused_on_arrival_and_fetched_from_another_replica()
    {
        var runs = Run("bad-chunks,crash,network", seeds: 40);
        Assert.True(runs.Sum(s => s.CountersWithPrefix("byz.bad-chunks.")) > 0, "the Byzantine replica never served a chunk or a manifest");
        string Figures() => string.Join(", ", new[] { "state-transfer.fetch-started", "state-transfer.chunk-fetched", "state-transfer.checkpoint-installed", "drop.state-chunk.bad", "state-transfer.chunk-retry.refused", "state-transfer.chunk-retry.late", "state-transfer.fetch-abandoned", "state-chunk.served", "state-transfer.started.peers-ahead" }.Select(k => $"{k}={runs.Sum(s => s.CoreCounter(k))}"))
            + " byz: " + string.Join(", ", runs.SelectMany(r => r.Stats.Counters).Where(kv => kv.Key.StartsWith("byz.", StringComparison.Ordinal)).GroupBy(kv => kv.Key).Select(g => $"{g.Key}={g.Sum(kv => kv.Value)}"));
        Assert.True(runs.Sum(s => s.CoreCounter("drop.state-chunk.bad")) > 0, "no correct replica was served a bad chunk: " + Figures());
        Assert.True(runs.Sum(s => s.CoreCounter("state-transfer.chunk-fetched")) > runs.Sum(s => s.CoreCounter("state-transfer.checkpoint-installed")), "checkpoints did not span several chunks");
        var refusedAndRecovered = runs.Where(r => r.Stats.CoreCounter("drop.state-chunk.bad") > 0 && r.Stats.CoreCounter("state-transfer.checkpoint-installed") > 0).ToList();
        Assert.NotEmpty(refusedAndRecovered);
        // Every bad chunk was caught by its own hash, never only once the whole state was assembled.
        Assert.Equal(0, runs.Sum(s => s.CoreCounter("drop.state-chunk.state-hash-mismatch")));
    }

    [Fact]
    public void Behaviours_also_hold_with_seven_replicas_and_two_liars()
    {
        var runs = SimulationAssert.AllPass("byzantine", 7, SimulationAssert.Seeds(100, 12));
        Assert.Contains(runs, r => r.Stats.ByzantineReplicas.Count == 2);
    }
}
