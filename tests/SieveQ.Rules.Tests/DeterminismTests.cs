using System.Security.Cryptography;
using SieveQ.Sieve.Replica;
using SieveQ.Rules.Evaluation;

namespace SieveQ.Rules.Tests;

public sealed class DeterminismTests
{
    private static CompiledRuleSet Scada() => RuleSetLoader.CompileUnsigned(Repo.Read("samples", "scada.json"));

    [Fact]
    public void Four_replicas_fed_the_same_stream_agree_on_every_verdict_and_every_state_hash()
    {
        // Separate compilations: nothing may depend on object identity or hash seeds either.
        var replicas = Enumerable.Range(0, 4).Select(_ => Scada().CreateEvaluator()).ToArray();
        var stream = MessageStream.Generate(42, 6000);
        var kinds = new HashSet<string>(StringComparer.Ordinal);
        for (var i = 0; i < stream.Count; i++)
        {
            var verdicts = replicas.Select(r => r.Decide(stream[i])).ToArray();
            Assert.All(verdicts, v => Assert.Equal(verdicts[0], v));
            kinds.Add((verdicts[0].Allowed ? "allow " : "deny ") + verdicts[0].Rule);
            if (i % 500 == 0)
            {
                var hashes = replicas.Select(r => Convert.ToHexString(SHA256.HashData(r.SnapshotState()))).ToArray();
                Assert.All(hashes, h => Assert.Equal(hashes[0], h));
            }
        }
        var finals = replicas.Select(r => r.SnapshotState()).ToArray();
        Assert.All(finals, f => Assert.Equal(finals[0], f));
        // The stream is only evidence if it reached the interesting rules.
        foreach (var expected in new[] { "allow hmi-modbus", "allow plc-responses", "allow setpoints-in-shift", "allow telemetry-to-historian",
                     "allow engineering-maintenance", "deny default-deny", "deny block-malware", "deny quarantine", "deny hmi-modbus", "deny setpoints-in-shift" })
        {
            Assert.Contains(expected, kinds);
        }
    }

    [Fact]
    public void Snapshot_and_restore_mid_stream_continues_identically()
    {
        var stream = MessageStream.Generate(7, 4000);
        var reference = Scada().CreateEvaluator();
        var expected = stream.Select(m => reference.Decide(m)).ToList();

        foreach (var cut in new[] { 1, 1234, 2000, 3999 })
        {
            var first = Scada().CreateEvaluator();
            for (var i = 0; i < cut; i++)
            {
                first.Decide(stream[i]);
            }
            var snapshot = first.SnapshotState();
            var restored = Scada().CreateEvaluator();
            restored.RestoreState(snapshot);
            Assert.Equal(snapshot, restored.SnapshotState());
            for (var i = cut; i < stream.Count; i++)
            {
                Assert.Equal(expected[i], restored.Decide(stream[i]));
            }
            Assert.Equal(reference.SnapshotState(), restored.SnapshotState());
        }
    }

    [Fact]
    public void A_snapshot_from_another_rule_set_version_is_refused_and_the_state_stays()
    {
        var scada = Scada().CreateEvaluator();
        foreach (var m in MessageStream.Generate(3, 300))
        {
            scada.Decide(m);
        }
        var other = T.Compile(T.Doc("\"rules\": []")).CreateEvaluator();
        Assert.Throws<Sieve.Envelope.MalformedEnvelopeException>(() => other.RestoreState(scada.SnapshotState()));
        var before = scada.SnapshotState();
        Assert.Throws<Sieve.Envelope.MalformedEnvelopeException>(() => scada.RestoreState(before.AsSpan(0, before.Length - 1)));
        Assert.Equal(before, scada.SnapshotState());
    }

    [Fact]
    public void The_kmp_baseline_engine_reaches_the_same_verdicts()
    {
        var ac = Scada().CreateEvaluator();
        var kmp = RuleSetLoader.CompileUnsigned(Repo.Read("samples", "scada.json"), new CompileOptions(Matching.LiteralEngine.Kmp)).CreateEvaluator();
        foreach (var m in MessageStream.Generate(5, 3000))
        {
            Assert.Equal(ac.Decide(m), kmp.Decide(m));
        }
        Assert.Equal(ac.SnapshotState(), kmp.SnapshotState());
    }

    [Fact]
    public void An_empty_state_snapshot_is_canonical()
    {
        var a = Scada().CreateEvaluator().SnapshotState();
        var b = Scada().CreateEvaluator().SnapshotState();
        Assert.Equal(a, b);
        var c = Scada().CreateEvaluator();
        c.RestoreState(a);
        Assert.Equal(a, c.SnapshotState());
    }

    [Fact]
    public void The_evaluator_is_the_core_interface()
    {
        IApplicationRules rules = Scada().CreateEvaluator();
        var v = rules.Evaluate(new RuleInput(T.At("2026-11-24T10:00:00Z"), 1, 1, 100, T.Hex("0001 0000 0006 01 03 0000 000a")));
        Assert.True(v.Allowed);
        Assert.Equal("hmi-modbus", v.Reason);
        var d = rules.Evaluate(new RuleInput(0, 1, 2, 200, "x"u8.ToArray()));
        Assert.False(d.Allowed);
        Assert.StartsWith("default-deny: ", d.Reason, StringComparison.Ordinal);
    }
}
