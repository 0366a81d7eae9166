using SieveQ.Rules.Evaluation;

namespace SieveQ.Rules.Tests;

/// <summary>Bounded tables forget the least recently used entry, identically on every replica, and count it.</summary>
public sealed class EvictionTests
{
    private const string Limited = """
        "limits": { "maxSenders": 3, "maxFlows": 2 },
        "rates": [{ "name": "once-an-hour", "window": "1h", "messages": 1 }],
        "flows": [{ "name": "rpc", "initial": "open", "maxOutstanding": 1 }],
        "receivers": [{ "id": 100 }, { "id": 101 }, { "id": 102 }],
        "rules": [
          { "name": "rpc", "action": "allow", "from": "any", "to": { "receivers": [101, 102] }, "flow": "rpc" },
          { "name": "hourly", "action": "allow", "from": "any", "to": { "receivers": [100] }, "rates": ["once-an-hour"] }
        ]
        """;

    private static RuleEvaluator New() => T.Compile(T.Doc(Limited)).CreateEvaluator();

    [Fact]
    public void The_least_recently_used_sender_is_forgotten_first()
    {
        var e = New();
        for (var s = 1; s <= 3; s++)
        {
            T.Allowed(e.Decide(s, s, 100, "x"), "hourly");
        }
        T.Denied(e.Decide(10, 1, 100, "x"), "hourly"); // touches sender 1: now 2 is the oldest
        T.Allowed(e.Decide(11, 4, 100, "x"), "hourly"); // a fourth sender evicts sender 2
        Assert.Equal(1, e.Stats.EvictedSenders);
        T.Allowed(e.Decide(12, 2, 100, "x"), "hourly"); // sender 2 starts afresh (and evicts 3)
        T.Denied(e.Decide(13, 1, 100, "x"), "hourly");  // sender 1 is remembered
        T.Denied(e.Decide(14, 4, 100, "x"), "hourly");
        T.Allowed(e.Decide(15, 3, 100, "x"), "hourly");
        Assert.Equal(3, e.Stats.EvictedSenders);
        Assert.Equal(3, e.Stats.TrackedSenders);
    }

    [Fact]
    public void The_least_recently_used_flow_is_forgotten_first()
    {
        var e = New();
        T.Allowed(e.Decide(1, 1, 101, "q"), "rpc");
        T.Allowed(e.Decide(2, 2, 101, "q"), "rpc");
        T.Denied(e.Decide(3, 1, 101, "q"), "rpc", "already outstanding"); // refused: does not touch the flow
        T.Allowed(e.Decide(4, 3, 101, "q"), "rpc"); // evicts flow (1, 101), the least recently used
        Assert.Equal(1, e.Stats.EvictedFlows);
        T.Allowed(e.Decide(5, 1, 101, "q"), "rpc");
        T.Denied(e.Decide(6, 3, 101, "q"), "rpc");
        Assert.Equal(2, e.Stats.TrackedFlows);
    }

    [Fact]
    public void Eviction_is_identical_across_replicas_and_survives_snapshot_restore()
    {
        var rng = new Random(99);
        var replicas = new[] { New(), New(), New() };
        for (var i = 0; i < 3000; i++)
        {
            var input = T.In(i * 100, rng.Next(1, 12), 100 + rng.Next(3), "x", i + 1);
            var verdicts = replicas.Select(r => r.Decide(input)).ToArray();
            Assert.All(verdicts, v => Assert.Equal(verdicts[0], v));
            if (i == 1500)
            {
                // Replace one replica by one restored from another's snapshot mid-stream.
                var restored = New();
                restored.RestoreState(replicas[0].SnapshotState());
                replicas[2] = restored;
            }
        }
        var snapshots = replicas.Select(r => r.SnapshotState()).ToArray();
        Assert.All(snapshots, s => Assert.Equal(snapshots[0], s));
        Assert.True(replicas[0].Stats.EvictedSenders > 100);
        Assert.True(replicas[0].Stats.EvictedFlows > 100);
        Assert.Equal(replicas[0].Stats.EvictedSenders, replicas[2].Stats.EvictedSenders);
    }
}
