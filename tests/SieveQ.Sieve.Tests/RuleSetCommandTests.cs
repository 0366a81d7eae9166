using System.Text;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Rule-set commands through the replica state machine with the real rule engine: four replicas fed
/// the same ordered stream (with a push and a rollback in the middle) agree on every verdict, result
/// and snapshot, switch at the same rule evaluation, and refuse bad commands without changing anything.
/// </summary>
public sealed class RuleSetCommandTests : IClassFixture<TestWorld>, IDisposable
{
    private const int CommandOrigin = 11;
    private readonly TestWorld _w;
    private readonly RuleSetWorld _r = new();

    public RuleSetCommandTests(TestWorld w) => _w = w;

    public void Dispose() => _r.Dispose();

    private static readonly ReplicaSieveOptions Options = new()
    {
        GrantRatePerSecond = 1_000_000,
        GrantBurst = 1_000_000,
    };

    private sealed record Step(DecisionContext Context, List<ClientRequest> Requests);

    /// <summary>Random messages (about a third holding "EVIL"), duplicates, and the given commands at the given decisions, each alone in its request.</summary>
    private List<Step> Stream(int seed, int decisions, IReadOnlyDictionary<int, byte[]> commands)
    {
        var rng = new Random(seed);
        var next = TestWorld.SenderIds.ToDictionary(s => s, _ => 1L);
        var sent = new List<byte[]>();
        var steps = new List<Step>();
        long reqSeq = 0;
        for (var cid = 1; cid <= decisions; cid++)
        {
            var requests = new List<ClientRequest>();
            if (commands.TryGetValue(cid, out var command))
            {
                requests.Add(TestWorld.Request(CommandOrigin, ++reqSeq, command));
            }
            var preSq = TestWorld.PreSqIds[rng.Next(2)];
            var items = new List<byte[]>();
            for (var k = rng.Next(1, 8); k > 0; k--)
            {
                var s = TestWorld.SenderIds[rng.Next(3)];
                if (rng.Next(10) == 0 && sent.Count > 0)
                {
                    items.Add(sent[rng.Next(sent.Count)]);
                    continue;
                }
                var text = new StringBuilder();
                for (var i = rng.Next(4, 40); i > 0; i--)
                {
                    text.Append((char)('a' + rng.Next(26)));
                }
                if (rng.Next(3) == 0)
                {
                    text.Insert(rng.Next(text.Length), "EVIL");
                }
                var m = _w.Message(s, next[s]++, TestWorld.ReceiverIds[rng.Next(2)], text.ToString());
                sent.Add(m);
                items.Add(m);
            }
            requests.Add(TestWorld.Request(preSq, ++reqSeq, items.ToArray()));
            steps.Add(new Step(TestWorld.At(cid, 1_000 + cid * 10L), requests));
        }
        return steps;
    }

    private static List<byte[]> Feed(SieveReplicaApplication app, IEnumerable<Step> steps)
    {
        var results = new List<byte[]>();
        foreach (var s in steps)
        {
            results.AddRange(app.Execute(s.Context, s.Requests).Replies);
        }
        return results;
    }

    private static List<RuleSetResult> RuleSetResults(IEnumerable<byte[]> results) =>
        results.Where(r => r[0] == (byte)StructureKind.RuleSetResult).Select(r => RuleSetResultCodec.Decode(r)).ToList();

    private (SieveReplicaApplication App, RecordingRules Rules) NewReplica()
    {
        var rules = new RecordingRules(_r.NewRules());
        return (new SieveReplicaApplication(_w.Keys, Options, rules), rules);
    }

    [Fact]
    public void Four_replicas_agree_on_verdicts_results_and_snapshots_across_a_push_and_a_rollback()
    {
        var v2 = RuleSetWorld.Document(2, screen: true);
        var commands = new Dictionary<int, byte[]>
        {
            [60] = _r.Push(v2, from: 1, to: 2, nonce: 10),
            [140] = _r.Rollback(from: 2, to: 1, nonce: 11),
        };
        var stream = Stream(seed: 5, decisions: 200, commands);
        var replicas = Enumerable.Range(0, TestWorld.N).Select(_ => NewReplica()).ToList();
        // Replica 0 prepares the commands ahead of ordering (as its host's verifier does); the others compute them inline.
        var verifier = replicas[0].App.CreateVerifier();
        foreach (var request in stream.SelectMany(s => s.Requests))
        {
            Assert.True(verifier.Verify(request));
        }
        var results = replicas.Select(r => Feed(r.App, stream)).ToList();
        Assert.Equal(2, replicas[0].Rules.Inner.PreparedHits);
        Assert.Equal(0, replicas[1].Rules.Inner.PreparedHits);

        var switches = RuleSetResults(results[0]);
        Assert.Equal(2, switches.Count);
        Assert.All(switches, s => Assert.True(s.Applied, s.Reason));
        Assert.Equal([2, 1], switches.Select(s => s.ActiveVersion));
        for (var i = 1; i < replicas.Count; i++)
        {
            Assert.Equal(results[0], results[i]);
            Assert.Equal(replicas[0].Rules.Verdicts, replicas[i].Rules.Verdicts);
            Assert.Equal(replicas[0].App.TakeSnapshot(), replicas[i].App.TakeSnapshot());
        }

        // The switch points are rule-evaluation numbers (1-based); every verdict came from the version in force there.
        var verdicts = replicas[0].Rules.Verdicts;
        var push = (int)switches[0].FromEvaluation;
        var rollback = (int)switches[1].FromEvaluation;
        Assert.InRange(push, 2, rollback - 1);
        Assert.InRange(rollback, push + 1, verdicts.Count);
        for (var e = 1; e <= verdicts.Count; e++)
        {
            var (version, allowed, reason, data) = verdicts[e - 1];
            var expected = e >= push && e < rollback ? 2 : 1;
            Assert.Equal(expected, version);
            var evil = data.Contains("EVIL", StringComparison.Ordinal);
            Assert.Equal(!(expected == 2 && evil), allowed);
            // Every verdict names its rule.
            Assert.StartsWith(expected == 2 ? "screen" : "open", reason, StringComparison.Ordinal);
        }
        Assert.Contains(verdicts.Take(push - 1), v => v.Data.Contains("EVIL", StringComparison.Ordinal) && v.Allowed);
        Assert.Contains(verdicts.Skip(push - 1).Take(rollback - push), v => !v.Allowed);
        Assert.True(replicas[0].App.RuleDenials["screen"] > 0);
        Assert.Equal(verdicts.Count(v => !v.Allowed), replicas[0].App.RuleDenials["screen"]);
        Assert.Equal(2, replicas[0].App.RuleSetCommandsApplied);
    }

    [Fact]
    public void A_replica_restored_from_a_snapshot_taken_between_push_and_rollback_continues_identically()
    {
        var commands = new Dictionary<int, byte[]>
        {
            [20] = _r.Push(RuleSetWorld.Document(2, screen: true), 1, 2, 5),
            [90] = _r.Rollback(2, 1, 6),
        };
        var stream = Stream(seed: 9, decisions: 120, commands);
        var whole = NewReplica();
        var wholeResults = Feed(whole.App, stream);
        var first = NewReplica();
        Feed(first.App, stream.Take(50));
        var restored = NewReplica();
        restored.App.RestoreSnapshot(first.App.TakeSnapshot());
        Assert.Equal(2, restored.App.ActiveRuleSetVersion);
        var tail = Feed(restored.App, stream.Skip(50));
        Assert.Equal(wholeResults.Skip(wholeResults.Count - tail.Count), tail);
        Assert.Equal(whole.App.TakeSnapshot(), restored.App.TakeSnapshot());
        Assert.Equal(1, restored.App.ActiveRuleSetVersion);
    }

    public static TheoryData<string> BadCommands => new()
    {
        "malformed", "unsigned", "wrongly-signed-command", "wrongly-signed-document", "oversized", "schema-invalid", "version-mismatch",
        "replayed", "stale-from-version", "version-not-newer", "rollback-wrong-target", "mixed-request",
    };

    /// <summary>Each bad command is refused with its reason; the running version and the rules' whole state stay as they were.</summary>
    [Theory]
    [MemberData(nameof(BadCommands))]
    public void A_bad_command_is_refused_with_a_reason_and_the_running_version_stays(string which)
    {
        var (app, rules) = NewReplica();
        var v2 = RuleSetWorld.Document(2, screen: true);
        long cid = 0;
        long seq = 0;
        byte[] Run(params byte[][] items) => app.ExecuteKeepingOutputs(TestWorld.At(++cid, 1_000 + cid), [TestWorld.Request(CommandOrigin, ++seq, items)])[0];

        // Some history first: version 2 active (nonce 7), version 1 kept for rollback.
        var firstPush = _r.Push(v2, 1, 2, 7);
        Assert.True(RuleSetResultCodec.Decode(Run(firstPush)).Applied);
        var (command, expected) = which switch
        {
            "malformed" => (_r.Push(RuleSetWorld.Document(3, true), 2, 3, 8)[..^10], "malformed command"),
            "unsigned" => ([.. _r.Push(RuleSetWorld.Document(3, true), 2, 3, 8)[..^64], .. new byte[64]], "not signed by the pinned administrator key"),
            "wrongly-signed-command" => (_r.Push(RuleSetWorld.Document(3, true), 2, 3, 8, commandKey: _r.Intruder), "not signed by the pinned administrator key"),
            "wrongly-signed-document" => (_r.Push(RuleSetWorld.Document(3, true), 2, 3, 8, documentKey: _r.Intruder), "not by the pinned administrator key"),
            "oversized" => (Oversized(), "above the limit"),
            "schema-invalid" => (_r.Push("""{ "schema": "sieveq-ruleset/v1", "version": 3, "rules": [{ "name": "x", "action": "maybe" }] }"""u8.ToArray(), 2, 3, 8, documentKey: null), "rule set refused"),
            "version-mismatch" => (_r.Push(RuleSetWorld.Document(4, true), 2, 3, 8), "the document is version 4"),
            "replayed" => (firstPush, "nonce 7 is not above the last applied nonce 7"),
            "stale-from-version" => (_r.Push(RuleSetWorld.Document(3, true), 1, 3, 8), "written against version 1, but version 2 is running"),
            "version-not-newer" => (RollbackThenRepush(), "version 2 is not above the highest version run so far (2)"),
            "rollback-wrong-target" => (_r.Rollback(2, 5, 8), "the version kept for rollback is 1, not 5"),
            _ => (Array.Empty<byte>(), "must be the only item"),
        };
        var before = rules.Inner.SnapshotState();
        var version = app.ActiveRuleSetVersion;
        var bytes = which == "mixed-request" ? Run(_r.Push(RuleSetWorld.Document(3, true), 2, 3, 8), _w.Message(1, 1, 100, "hello")) : Run(command);
        var result = RuleSetResultCodec.Decode(bytes);
        Assert.False(result.Applied);
        Assert.StartsWith("refused: ", result.Reason, StringComparison.Ordinal);
        Assert.Contains(expected, result.Reason, StringComparison.Ordinal);
        Assert.Equal(version, result.ActiveVersion);
        Assert.Equal(version, app.ActiveRuleSetVersion);
        Assert.Equal(before, rules.Inner.SnapshotState());
        Assert.True(app.RuleSetCommandsRefused >= 1);
        // And the running version still decides: version 2 denies a screened payload, version 1 lets it through.
        var screened = app.ExecuteKeepingOutputs(TestWorld.At(++cid, 5_000), [TestWorld.Request(10, ++seq, _w.Message(2, 1, 100, "an EVIL thing"))])[0];
        Assert.Equal(version == 2 ? new ExecuteResult(0, 0, 1) : new ExecuteResult(1, 0, 0), ExecuteResultCodec.Decode(screened));

        byte[] RollbackThenRepush()
        {
            // Back to version 1; version 2 is the highest ever run, so pushing it again is refused: rollback is the only way back.
            Assert.True(RuleSetResultCodec.Decode(Run(_r.Rollback(2, 1, 8))).Applied);
            return _r.Push(v2, 1, 2, 9);
        }
    }

    /// <summary>A command whose document is one byte over the cap, otherwise well formed and signed.</summary>
    private byte[] Oversized()
    {
        var doc = new byte[EnvelopeLimits.MaxRuleSetDocumentBytes + 1];
        var sidecar = "{}"u8.ToArray();
        using var w = new CanonicalWriter(doc.Length + 100);
        w.U8((byte)StructureKind.RuleSetCommand);
        w.U8((byte)RuleSetOp.Activate);
        w.Id(2);
        w.Id(3);
        w.Seq(8);
        w.Bytes(doc);
        w.Bytes(sidecar);
        return RuleSetCommandCodec.Sign(w.WrittenSpan, _r.Admin);
    }

    [Fact]
    public void A_replica_on_fixed_routes_refuses_rule_set_commands_and_keeps_admitting()
    {
        var app = _w.Replica(Options);
        var result = RuleSetResultCodec.Decode(app.ExecuteKeepingOutputs(TestWorld.At(1, 1_000), [TestWorld.Request(10, 1, _r.Push(RuleSetWorld.Document(2, true), 1, 2, 1))])[0]);
        Assert.False(result.Applied);
        Assert.Contains("fixed routes", result.Reason, StringComparison.Ordinal);
        Assert.Null(app.ActiveRuleSetVersion);
        var ok = app.ExecuteKeepingOutputs(TestWorld.At(2, 1_001), [TestWorld.Request(10, 2, _w.Message(1, 1, 100, "EVIL but routed"))])[0];
        Assert.Equal(new ExecuteResult(1, 0, 0), ExecuteResultCodec.Decode(ok));
    }
}
