using SieveQ.Cli.Running;
using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

/// <summary>`sieveq status`'s figures: rates from two probes, drops by stage, and agreed figures one replica cannot move.</summary>
public class StatusFiguresTests
{
    private static ComponentHealth Replica(int i, long regency, long processed, long rulesDrops = 0, long quarantinedPreSq5 = 0, long checkpoint = 32) =>
        new("replica-sq", $"replica-sq-{i}", "https://x", true, true, "ok", new Dictionary<string, long>
        {
            ["regency"] = regency, ["last_decided"] = 40, ["checkpoint"] = checkpoint, ["processed"] = processed, ["held"] = 0, ["dropped"] = rulesDrops,
            ["queue.100"] = 3, ["queue_bytes.100"] = 1500, ["drop.Rules.RuleDenied"] = rulesDrops,
            ["quarantined.senders"] = 0, ["quarantined.pre_sq.4"] = 0, ["quarantined.pre_sq.5"] = quarantinedPreSq5,
        });

    private static ComponentHealth PreSq(int id, long passed, long macDrops) =>
        new("pre-sq", $"pre-sq-{id}", "https://x", true, true, "ok", new Dictionary<string, long>
        {
            ["passed"] = passed, ["dropped"] = macDrops, ["drop.Mac.BadMac"] = macDrops, ["ordering_in_flight"] = 1,
        });

    [Fact]
    public void A_replica_line_has_its_regency_rate_and_queue()
    {
        var line = StatusFigures.Of(Replica(0, 2, 1_500), Replica(0, 2, 1_000), 0.5);
        Assert.Equal("regency 2, last decided 40, checkpoint 32, processed 1500 (1000 msg/s), held 0, queued 3 msgs / 1500 B, dropped 0", line);
        Assert.Null(StatusFigures.Of(new ComponentHealth("replica-sq", "replica-sq-1", "https://x", false, false, "down", new Dictionary<string, long>()), null, 1));
    }

    [Fact]
    public void Agreed_figures_are_what_f_plus_one_replicas_report_and_pre_sq_drops_add_up()
    {
        // Replica 3 lies: regency 99, a huge rate, 1,000 rule drops and pre-SQ 5 quarantined. f = 1: the second highest counts.
        ComponentHealth[] before = [Replica(0, 1, 0), Replica(1, 1, 0), Replica(2, 1, 0), Replica(3, 99, 0), PreSq(4, 0, 0), PreSq(5, 0, 0)];
        ComponentHealth[] now = [Replica(0, 1, 800, 2), Replica(1, 1, 800, 2), Replica(2, 1, 790, 2), Replica(3, 99, 90_000, 1_000, 1, checkpoint: 1_000_000), PreSq(4, 400, 7), PreSq(5, 400, 3)];
        var lines = StatusFigures.Sieve(now, before, 1.0, f: 1);
        Assert.Equal("ordering: regency 1 (leader replica-sq-1), last decided 40, checkpoint 32; sieve processing 800 msg/s", lines[0]);
        Assert.Equal("quarantined: 0 sender(s), pre-SQs: none", lines[1]);
        Assert.Equal("assignment: none reported", lines[2]);
        Assert.Equal("drops by stage: (a) Whitelist 0, (b) Sequence 0, (c) Mac 10, (d) Grant 0, (e) ReplicaAdmission 0, (f) Rules 2, (g) Vote 0", lines[5]);
    }

    [Fact]
    public void The_assignment_line_names_the_senders_f_plus_one_replicas_assign_to_each_pre_sq_and_the_moving_ones()
    {
        static ComponentHealth Assigning(int i, params (int Sender, long PreSq)[] assigned) =>
            new("replica-sq", $"replica-sq-{i}", "https://x", true, true, "ok", assigned.ToDictionary(a => $"assigned.sender.{a.Sender}", a => a.PreSq));
        // f = 1. Sender 3: two replicas say 5 (the lying one says 4); sender 7: one each for 4 and 5, two report none.
        ComponentHealth[] now =
        [
            Assigning(0, (1, 4), (2, 4), (3, 5), (7, 4)), Assigning(1, (1, 4), (2, 4), (3, 5), (7, 5)), Assigning(2, (1, 4), (2, 5)), Assigning(3, (1, 4), (3, 4)),
        ];
        var lines = StatusFigures.Sieve(now, now, 1.0, f: 1);
        Assert.Equal("assignment: pre-sq-4: senders 1, 2; pre-sq-5: sender 3; moving: sender 7", lines[2]);
    }

    private static ComponentHealth Agent(string name, params (int Sender, long Samples, long P50Us, long P99Us)[] senders)
    {
        var c = new Dictionary<string, long> { ["receiver.100.delivered"] = 0 };
        foreach (var (id, n, p50, p99) in senders)
        {
            c[$"sender.{id}.delivered"] = n;
            c[$"sender.{id}.verdict_latency_samples"] = n;
            c[$"sender.{id}.verdict_latency_p50_us"] = p50;
            c[$"sender.{id}.verdict_latency_p99_us"] = p99;
        }
        return new ComponentHealth("agent", name, "unix:x", true, true, "ok", c);
    }

    [Fact]
    public void Verdict_latency_is_the_slowest_senders_and_a_sender_without_verdicts_is_left_out()
    {
        // Sender 3 had no verdict in the window: its zero percentiles must not read as "fast".
        var a = Agent("a", (1, 500, 4_100, 9_800), (3, 0, 0, 0));
        var b = Agent("b", (2, 80, 6_000, 31_250));
        var lines = StatusFigures.Sieve([a, b], [], 1.0, f: 1);
        Assert.Contains("verdict latency (numbered to f+1 replicas' verdict, the last ~1 min, slowest sender 2): p50 6.0 ms, p99 31.3 ms over 80 messages", lines);
        Assert.EndsWith(", verdict latency p50 4.1 ms / p99 9.8 ms (sender 1, slowest)", StatusFigures.Of(a, null, 1));

        var idle = Agent("c", (1, 0, 0, 0));
        Assert.Contains("verdict latency (numbered to f+1 replicas' verdict, the last ~1 min): no verdicts", StatusFigures.Sieve([idle], [], 1.0, f: 1));
        Assert.DoesNotContain("verdict latency", StatusFigures.Of(idle, null, 1), StringComparison.Ordinal);
    }

    [Fact]
    public void Without_f_plus_one_replicas_nothing_agreed_is_claimed()
    {
        var down = new ComponentHealth("replica-sq", "replica-sq-1", "https://x", false, false, "down", new Dictionary<string, long>());
        var lines = StatusFigures.Sieve([Replica(0, 5, 10), down], [], 1.0, f: 1);
        Assert.Equal("ordering: 1 replica-SQ(s) answered, 2 needed to say anything agreed", lines[0]);
    }
}
