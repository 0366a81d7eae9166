using System.Diagnostics;
using System.Text;
using SieveQ.Cli.Bench;
using SieveQ.Sieve.Replica;
using SieveQ.Rules;
using SieveQ.Rules.Evaluation;

namespace SieveQ.Cli.Tests;

/// <summary>
/// The parts of `bench e2e --rules` that decide what is compared with what: the baseline rule set (the
/// same rules without patterns), the phase order, and which phase a delivery is counted under.
/// </summary>
public sealed class RulesAbTests
{
    private static readonly string Sample = RulesCheckTests.Samples("patterns-1000.json");

    private const string Mixed = """
        { "schema": "sieveq-ruleset/v1", "version": 7, "name": "mixed",
          "senders": [{ "id": 1, "name": "a" }, { "id": 3, "name": "c" }],
          "receivers": [{ "id": 2, "name": "b" }, { "id": 9, "name": "i" }],
          "patternSets": [{ "name": "bad", "literals": ["EVIL"] }],
          "rules": [
            { "name": "no-evil-to-9", "action": "deny", "from": "any", "to": { "receivers": [9] }, "contains": ["bad"] },
            { "name": "never-3", "action": "deny", "from": { "senders": [3] }, "to": "any" },
            { "name": "screen", "action": "allow", "from": "any", "to": "any", "maxBytes": 64, "rejectPatterns": ["bad"] } ] }
        """;

    private static RuleDecision Decide(byte[] json, int sender, int receiver, string text) =>
        RuleSetLoader.CompileUnsigned(json).CreateEvaluator().Decide(new RuleInput(0, sender, 1, receiver, Encoding.UTF8.GetBytes(text)));

    [Fact]
    public void The_baseline_is_the_same_rules_without_string_matching()
    {
        var original = Encoding.UTF8.GetBytes(Mixed);
        var baseline = RuleSetVariants.WithoutPatterns(original);
        var summary = RuleSetLoader.CompileUnsigned(baseline).Summary;

        Assert.Equal(0, summary.Literals);
        Assert.Equal(2, summary.Rules);   // the deny that fired only on a pattern is gone
        Assert.False(Decide(original, 1, 9, "EVIL").Allowed);
        Assert.True(Decide(baseline, 1, 9, "EVIL").Allowed);
        Assert.False(Decide(original, 1, 2, "more EVIL").Allowed);
        Assert.True(Decide(baseline, 1, 2, "more EVIL").Allowed);
        // Everything that is not string matching stays: the route deny and the size limit.
        Assert.Equal("never-3", Decide(baseline, 3, 2, "hello").Rule);
        Assert.False(Decide(baseline, 3, 2, "hello").Allowed);
        Assert.False(Decide(baseline, 1, 2, new string('x', 65)).Allowed);
        Assert.True(Decide(baseline, 1, 2, "hello").Allowed);
    }

    [Fact]
    public void The_shipped_sample_has_a_baseline_and_each_push_gets_its_own_version()
    {
        var sample = File.ReadAllBytes(Sample);
        Assert.Equal(1000, RuleSetLoader.CompileUnsigned(sample).Summary.Literals);
        var baseline = RuleSetVariants.WithVersion(RuleSetVariants.WithoutPatterns(sample), 1);
        Assert.Equal(1, RuleSetLoader.CompileUnsigned(baseline).Version);
        Assert.Equal(0, RuleSetLoader.CompileUnsigned(baseline).Summary.Literals);
        Assert.Equal(4, RuleSetLoader.CompileUnsigned(RuleSetVariants.WithVersion(sample, 4)).Version);
        Assert.Equal(1000, RuleSetLoader.CompileUnsigned(RuleSetVariants.WithVersion(sample, 4)).Summary.Literals);
    }

    [Fact]
    public void A_document_that_is_not_a_rule_set_is_refused_with_a_clear_error()
    {
        var e = Assert.Throws<RuleSetException>(() => RuleSetVariants.WithoutPatterns("[1, 2]"u8.ToArray()));
        Assert.Contains("JSON object", e.Message, StringComparison.Ordinal);
        e = Assert.Throws<RuleSetException>(() => RuleSetVariants.WithoutPatterns("{ not json"u8.ToArray()));
        Assert.Contains("not JSON", e.Message, StringComparison.Ordinal);
        e = Assert.Throws<RuleSetException>(() => RuleSetVariants.WithVersion(Encoding.UTF8.GetBytes(Mixed), 0));
        Assert.Contains("version 0 does not compile", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Phases_run_in_abba_order_and_fit_the_duration()
    {
        Assert.Equal(
            [PhaseArm.Treatment, PhaseArm.Baseline, PhaseArm.Baseline, PhaseArm.Treatment, PhaseArm.Treatment, PhaseArm.Baseline, PhaseArm.Baseline, PhaseArm.Treatment],
            Enumerable.Range(0, 8).Select(RulesAbSwitcher.ArmOf));
        Assert.Equal(6, RulesAbSwitcher.PhaseCount(TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(5)));
        Assert.Equal(2, RulesAbSwitcher.PhaseCount(TimeSpan.FromSeconds(3), TimeSpan.FromSeconds(5)));
        Assert.Equal(MeasuredPhases.MaxPhases, RulesAbSwitcher.PhaseCount(TimeSpan.FromHours(1), TimeSpan.FromSeconds(2)));
    }

    [Fact]
    public void A_delivery_counts_under_the_phase_it_was_sent_in_and_never_between_phases()
    {
        var f = Stopwatch.Frequency;
        var phases = new MeasuredPhases();
        phases.Open(PhaseArm.Treatment, "v2", 10 * f);
        phases.Record(11 * f, 5_000);           // in phase 1, delivered whenever
        phases.Record(9 * f, 99_000);           // before any phase: warm-up
        phases.Close(12 * f);
        phases.Record(12 * f, 99_000);          // the switch: no phase
        phases.Open(PhaseArm.Baseline, "v3", 14 * f);
        phases.Record(13 * f, 99_000);          // settling after the switch: no phase
        phases.Record(14 * f, 1_000);
        phases.Record(15 * f, 3_000);
        phases.Close(16 * f);
        phases.Record(16 * f, 99_000);          // after the last phase

        Assert.Equal(1, phases.Phase(0).Samples);
        Assert.Equal(2, phases.Phase(1).Samples);
        Assert.Equal(1, phases.Arm(PhaseArm.Treatment).Samples);
        Assert.Equal(5, phases.Arm(PhaseArm.Treatment).P50Ms);
        Assert.Equal(2, phases.Arm(PhaseArm.Baseline).Samples);
        Assert.Equal(2, phases.ArmSeconds(PhaseArm.Treatment, f));
        Assert.Equal(2, phases.ArmSeconds(PhaseArm.Baseline, f));

        var report = RulesAbReport.From(phases);
        Assert.Equal(5.0 / 3.0, report.P50Ratio, 3);   // 5 ms against the baseline's p50, 3 ms
        Assert.Equal(0.5, report.ThroughputRatio, 3);  // 1 delivery in 2 s against 2 in 2 s
        var lines = report.Lines().ToList();
        Assert.Contains(lines, l => l.Contains("phase  1 +rules", StringComparison.Ordinal) && l.Contains("v2", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.Contains("phase  2 -patterns", StringComparison.Ordinal) && l.Contains("v3", StringComparison.Ordinal));
        Assert.StartsWith("ratio (rules / same rules without patterns, one deployment): p50 latency x1.667", lines[^1], StringComparison.Ordinal);
    }

    [Fact]
    public void Phases_must_be_closed_and_in_order()
    {
        var phases = new MeasuredPhases();
        phases.Open(PhaseArm.Treatment, "v2", 100);
        Assert.Throws<InvalidOperationException>(() => phases.Open(PhaseArm.Baseline, "v3", 200));
        phases.Close(150);
        Assert.Throws<InvalidOperationException>(() => phases.Open(PhaseArm.Baseline, "v3", 120));
        phases.Open(PhaseArm.Baseline, "v3", 150);
        Assert.Equal(2, phases.Phases.Count);
    }
}
