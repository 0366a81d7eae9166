using System.Text;
using SieveQ.Sieve.Replica;
using SieveQ.Rules.Activation;

namespace SieveQ.Rules.Tests;

/// <summary>
/// The literal scan done ahead of execution (on the verifier's threads): evaluation takes its result
/// instead of scanning, decides exactly as an inline scan would, and takes only a result its own
/// compiled version computed.
/// </summary>
public sealed class PrescanTests
{
    private static CompiledRuleSet Scada() => RuleSetLoader.CompileUnsigned(Repo.Read("samples", "scada.json"));

    private static readonly string WithPatterns = T.Doc("""
        "patternSets": [{ "name": "bad", "literals": ["attack"], "regexes": ["ev[i1]l"] }],
        "rules": [{ "name": "screen", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["bad"] }]
        """, 2);

    [Fact]
    public void Payloads_scanned_ahead_in_parallel_give_the_same_decisions_and_state_as_inline_scans()
    {
        var stream = MessageStream.Generate(11, 5000);
        var ahead = Scada();
        var aheadEval = ahead.CreateEvaluator();
        var inline = Scada().CreateEvaluator();
        var prescans = new PayloadPrescan[stream.Count];
        Parallel.For(0, stream.Count, i => prescans[i] = aheadEval.Prescan(stream[i].Data));
        var denied = 0;
        for (var i = 0; i < stream.Count; i++)
        {
            var d = aheadEval.Decide(stream[i] with { Prescan = prescans[i] });
            Assert.Equal(inline.Decide(stream[i]), d);
            denied += d.Rule == "block-malware" ? 1 : 0;
        }
        Assert.Equal(inline.SnapshotState(), aheadEval.SnapshotState());
        Assert.True(denied > 0, "the stream must contain payloads the patterns deny");
        var stats = ahead.Prescans;
        Assert.Equal(stream.Count, stats.Prescanned);
        Assert.True(stats.Found > 0);
        Assert.Equal(0, stats.ScannedInline);
    }

    [Fact]
    public void Evaluation_takes_the_literal_hits_from_its_own_versions_prescan_only()
    {
        // A hit set made up for a clean payload denies it: proof that evaluation uses the prescan instead
        // of scanning again (a real prescan is the scan itself, so this cannot happen in use).
        var set = T.Compile(WithPatterns);
        var other = T.Compile(WithPatterns);
        var clean = "all quiet"u8.ToArray();
        var genuine = set.Prescan(clean);
        Assert.Same(set.Patterns, genuine.Owner);
        Assert.Equal(0UL, genuine.Hits);
        var madeUp = new PayloadPrescan(set.Patterns, 1UL);
        T.Denied(set.CreateEvaluator().Decide(T.In(0, 1, 2, clean) with { Prescan = madeUp }), "screen", "pattern set bad");
        Assert.Equal(1, set.Prescans.Found);
        // The same made-up result from another compilation of the same document is not taken.
        T.Allowed(other.CreateEvaluator().Decide(T.In(0, 1, 2, clean) with { Prescan = madeUp }), "screen");
        Assert.Equal(new PrescanStats(0, 0, 1), other.Prescans);
    }

    [Fact]
    public void Regular_expressions_stay_lazy_so_a_denial_names_the_same_thing_either_way()
    {
        var ahead = T.Compile(WithPatterns);
        var inline = T.Compile(WithPatterns).CreateEvaluator();
        var evaluator = ahead.CreateEvaluator();
        foreach (var text in new[] { "an attack", "something ev1l", "attack and evil", "fine" })
        {
            var data = Encoding.UTF8.GetBytes(text);
            var d = evaluator.Decide(T.In(0, 1, 2, data) with { Prescan = evaluator.Prescan(data) });
            Assert.Equal(inline.Decide(T.In(0, 1, 2, data)), d);
        }
        Assert.Equal(new PrescanStats(4, 4, 0), ahead.Prescans);
    }

    [Fact]
    public void Nothing_is_scanned_ahead_for_oversized_payloads_or_rule_sets_without_literals()
    {
        var small = T.Compile(T.Doc("""
            "limits": { "maxMessageBytes": 16 },
            "patternSets": [{ "name": "bad", "literals": ["attack"] }],
            "rules": [{ "name": "screen", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["bad"] }]
            """));
        Assert.Equal(PayloadPrescan.None, small.Prescan(new byte[17]));
        Assert.Equal(new PrescanStats(0, 0, 0), small.Prescans);
        var routesOnly = T.Compile(T.Doc("""
            "rules": [{ "name": "all", "action": "allow", "from": "any", "to": "any" }]
            """));
        Assert.Equal(PayloadPrescan.None, routesOnly.Prescan("attack"u8.ToArray()));
    }

    [Fact]
    public void A_prescan_made_before_a_switch_is_ignored_by_the_version_running_after_it()
    {
        var v1 = T.Compile(T.Doc("""
            "patternSets": [{ "name": "old", "literals": ["legacy"] }],
            "rules": [{ "name": "v1", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["old"] }]
            """));
        var v2 = T.Compile(WithPatterns);
        var store = new RuleSetStore(v1);
        store.AdvanceTo(0);
        var data = "an attack"u8.ToArray();
        var before = store.Prescan(data);
        Assert.Same(v1.Patterns, before.Owner);
        Assert.Equal(ScheduleResult.Scheduled, store.ScheduleActivation(v2, 5));
        store.AdvanceTo(5);
        T.Denied(store.Decide(T.In(0, 1, 2, data) with { Prescan = before }), "screen", "attack");
        Assert.Equal(new PrescanStats(0, 0, 1), v2.Prescans);
        var after = store.Prescan(data);
        Assert.Same(v2.Patterns, after.Owner);
        T.Denied(store.Decide(T.In(0, 1, 2, data) with { Prescan = after }), "screen", "attack");
        Assert.Equal(new PrescanStats(1, 1, 1), v2.Prescans);
    }

    [Fact]
    public void The_replicas_rules_prescan_through_the_ordered_rule_sets()
    {
        using var admin = T.NewKey();
        var set = T.Compile(WithPatterns);
        IApplicationRules rules = new OrderedRuleSets(set, Signing.SignerKey.Of(admin));
        var prescan = Assert.IsAssignableFrom<IPayloadPrescan>(rules).Prescan("an attack"u8.ToArray());
        Assert.False(rules.Evaluate(T.In(0, 1, 2, "an attack") with { Prescan = prescan }).Allowed);
        Assert.Equal(new PrescanStats(1, 1, 0), set.Prescans);
    }
}
