using SieveQ.Bft.Client;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Bft.Simulation.Application;
using SieveQ.Bft.Simulation.Checking;

namespace SieveQ.Bft.Tests.Simulation;

/// <summary>The checker must catch violations fed to it by hand, or a green sweep would prove nothing.</summary>
public class CheckerTests
{
    private static readonly ReplicaConfig Config = new() { N = 4, TimestampSkewMs = 200 };

    private static InvariantChecker NewChecker(long now = 1_000) => new(Config, [true, true, true, false], () => now, 0);

    private static ClientRequest Request(int client, long seq, byte tag = 1) => new(client, seq, [tag, 2, 3]);

    [Fact]
    public void Two_decisions_for_one_instance_break_agreement()
    {
        var c = NewChecker();
        c.OnDecided(0, 1, new Batch(10, [Request(1000, 1)]));
        c.OnDecided(1, 1, new Batch(10, [Request(1000, 1)]));
        Assert.False(c.Failed);
        c.OnDecided(2, 1, new Batch(11, [Request(1000, 1)]));
        Assert.StartsWith("agreement", c.Failure);
    }

    [Fact]
    public void A_byzantine_replica_deciding_differently_is_not_a_violation()
    {
        var c = NewChecker();
        c.OnDecided(0, 1, new Batch(10, []));
        c.OnDecided(3, 1, new Batch(99, []));
        Assert.False(c.Failed);
    }

    [Fact]
    public void Decided_timestamps_must_not_go_back_nor_run_ahead()
    {
        var back = NewChecker();
        back.OnDecided(0, 1, new Batch(500, []));
        back.OnDecided(0, 2, new Batch(400, []));
        Assert.StartsWith("timestamp", back.Failure);

        var ahead = NewChecker(now: 1_000);
        ahead.OnDecided(0, 1, new Batch(1_000 + 201, []));
        Assert.StartsWith("timestamp", ahead.Failure);
    }

    [Fact]
    public void Different_ledgers_after_one_instance_break_identical_prefixes()
    {
        var c = NewChecker();
        var a = new LedgerApp(0, c);
        var b = new LedgerApp(1, c);
        var r1 = Request(1000, 1);
        var r2 = Request(1000, 2);
        c.OnSubmitted(r1);
        c.OnSubmitted(r2);
        a.Execute(new DecisionContext(1, 10), [r1, r2]);
        b.Execute(new DecisionContext(1, 10), [r2, r1]);
        Assert.StartsWith("identical prefixes", c.Failure);
    }

    [Fact]
    public void Executing_a_request_no_client_sent_breaks_validity()
    {
        var c = NewChecker();
        c.OnSubmitted(Request(1000, 1, tag: 1));
        new LedgerApp(0, c).Execute(new DecisionContext(1, 10), [Request(1000, 1, tag: 9)]);
        Assert.StartsWith("validity", c.Failure);

        var c2 = NewChecker();
        new LedgerApp(0, c2).Execute(new DecisionContext(1, 10), [Request(1001, 1)]);
        Assert.StartsWith("validity", c2.Failure);
    }

    [Fact]
    public void Executing_a_request_twice_is_caught_even_after_a_snapshot_restore()
    {
        var c = NewChecker();
        var r = Request(1000, 1);
        c.OnSubmitted(r);
        var a = new LedgerApp(0, c);
        a.Execute(new DecisionContext(1, 10), [r]);
        var restored = new LedgerApp(0, c);
        restored.RestoreSnapshot(a.TakeSnapshot());
        Assert.False(c.Failed);
        restored.Execute(new DecisionContext(2, 10), [r]);
        Assert.StartsWith("no double execution", c.Failure);
    }

    [Fact]
    public void Ledger_snapshots_are_byte_exact_and_restore_the_same_head()
    {
        var c = NewChecker();
        var a = new LedgerApp(0, c);
        var b = new LedgerApp(1, c);
        var cid = 0L;
        foreach (var s in new[] { 3L, 1, 2 })
        {
            var r = Request(1000, s);
            c.OnSubmitted(r);
            cid++;
            a.Execute(new DecisionContext(cid, 10 * cid), [r]);
            b.Execute(new DecisionContext(cid, 10 * cid), [r]);
        }
        Assert.Equal(a.TakeSnapshot(), b.TakeSnapshot());
        var restored = new LedgerApp(2, c);
        restored.RestoreSnapshot(a.TakeSnapshot());
        Assert.Equal(a.Head, restored.Head);
        Assert.Equal(a.TakeSnapshot(), restored.TakeSnapshot());
        Assert.False(c.Failed);
    }

    [Fact]
    public void Regency_or_last_decided_going_back_across_a_restart_is_caught()
    {
        var c = NewChecker();
        var signer = new FixedSigner();
        var before = new ReplicaCore(Config, 0, new LedgerApp(0, c), signer, [new RegencyRecord(5)]);
        c.AfterStep(0, before);
        Assert.False(c.Failed);
        var amnesiac = new ReplicaCore(Config, 0, new LedgerApp(0, c), signer);
        c.AfterStep(0, amnesiac);
        Assert.StartsWith("regency monotonic", c.Failure);
    }

    [Fact]
    public void A_client_accepting_a_result_no_correct_replica_computed_is_caught()
    {
        var c = NewChecker();
        var r = Request(1000, 1);
        c.OnSubmitted(r);
        new LedgerApp(0, c).Execute(new DecisionContext(1, 10), [r]);
        c.OnCompleted(1000, new CompletedRequest(1, 1, new byte[32], 0, 5));
        Assert.StartsWith("client result", c.Failure);
    }

    [Fact]
    public void Serving_state_to_one_peer_faster_than_the_limit_is_caught()
    {
        var c = new InvariantChecker(Config with { StateServeIntervalMs = 100 }, [true, true, true, true], () => 0, 0);
        c.OnStateServed(0, 1, 1_000);
        c.OnStateServed(0, 2, 1_010);
        c.OnStateServed(0, 1, 1_100);
        Assert.False(c.Failed);
        c.OnStateServed(0, 1, 1_150);
        Assert.StartsWith("state serving rate limit", c.Failure);
    }

    [Fact]
    public void Deciding_an_instance_again_is_caught_unless_a_restart_lost_it()
    {
        var c = NewChecker();
        c.OnDecided(0, 1, new Batch(10, []));
        c.OnDecided(0, 2, new Batch(11, []));
        c.OnDecided(0, 2, new Batch(11, []));
        Assert.StartsWith("instance order", c.Failure);

        // A restart back to instance 1 (its decision record for 2 was not synced yet) may decide 2 again...
        var restarted = NewChecker();
        restarted.OnDecided(0, 1, new Batch(10, []));
        restarted.OnDecided(0, 2, new Batch(11, []));
        restarted.OnRestart(0, recoveredLastDecided: 1);
        restarted.OnDecided(0, 2, new Batch(11, []));
        Assert.False(restarted.Failed);
        // ...but only with the value it decided before.
        restarted.OnRestart(0, recoveredLastDecided: 1);
        restarted.OnDecided(0, 2, new Batch(12, []));
        Assert.StartsWith("agreement", restarted.Failure);
    }

    [Fact]
    public void Only_the_first_violation_is_kept()
    {
        var c = NewChecker();
        c.Fail("first", "a");
        c.Fail("second", "b");
        Assert.StartsWith("first", c.Failure);
    }

    private sealed class FixedSigner : IProofSigner
    {
        public byte[] Sign(ReadOnlySpan<byte> data) => new byte[32];
    }
}
