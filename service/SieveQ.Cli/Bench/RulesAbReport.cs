using System.Diagnostics;
using System.Globalization;
using SieveQ.Bft.Hosting.Bench;

namespace SieveQ.Cli.Bench;

/// <summary>One arm of the rules A/B: its pooled latencies and delivered rate over the seconds its phases cover.</summary>
internal sealed record RulesAbArm(string Name, LatencySummary Latency, double Seconds)
{
    public double DeliveredPerSecond => BenchRatio.Of(Latency.Samples, Seconds);
}

/// <summary>The rules A/B of one deployment: every phase, both arms, and the ratios the issue asks for.</summary>
internal sealed record RulesAbReport(IReadOnlyList<(MeasuredPhase Phase, LatencySummary Latency)> Phases, RulesAbArm WithRules, RulesAbArm WithoutPatterns)
{
    public double P50Ratio => BenchRatio.Of(WithRules.Latency.P50Ms, WithoutPatterns.Latency.P50Ms);

    public double P99Ratio => BenchRatio.Of(WithRules.Latency.P99Ms, WithoutPatterns.Latency.P99Ms);

    public double ThroughputRatio => BenchRatio.Of(WithRules.DeliveredPerSecond, WithoutPatterns.DeliveredPerSecond);

    public static RulesAbReport From(MeasuredPhases phases)
    {
        var list = phases.Phases.Select(p => (p, phases.Phase(p.Index))).ToList();
        return new RulesAbReport(list,
            new RulesAbArm("+rules", phases.Arm(PhaseArm.Treatment), phases.ArmSeconds(PhaseArm.Treatment, Stopwatch.Frequency)),
            new RulesAbArm("-patterns", phases.Arm(PhaseArm.Baseline), phases.ArmSeconds(PhaseArm.Baseline, Stopwatch.Frequency)));
    }

    public IEnumerable<string> Lines()
    {
        var c = CultureInfo.InvariantCulture;
        foreach (var (p, l) in Phases)
        {
            var seconds = (double)(p.To - p.From) / Stopwatch.Frequency;
            yield return string.Format(c, "  phase {0,2} {1,-10} {2,-4} {3,5:0.0} s  delivered {4,8:0}/s  p50 {5,8:0.00} ms  p99 {6,8:0.00} ms",
                p.Index + 1, Name(p.Arm), p.Label, seconds, BenchRatio.Of(l.Samples, seconds), l.P50Ms, l.P99Ms);
        }
        foreach (var a in new[] { WithRules, WithoutPatterns })
        {
            yield return string.Format(c, "{0,-10} {1,5:0.0} s  delivered {2,8:0}/s  p50 {3,8:0.00} ms  p99 {4,8:0.00} ms  mean {5,8:0.00} ms",
                a.Name, a.Seconds, a.DeliveredPerSecond, a.Latency.P50Ms, a.Latency.P99Ms, a.Latency.MeanMs);
        }
        yield return string.Format(c, "ratio (rules / same rules without patterns, one deployment): p50 latency x{0:0.000}, p99 latency x{1:0.000}, throughput {2:0.000}",
            P50Ratio, P99Ratio, ThroughputRatio);
    }

    public object Json() => new
    {
        phases = Phases.Select(x => new
        {
            index = x.Phase.Index + 1,
            arm = Name(x.Phase.Arm),
            ruleSetVersion = x.Phase.Label,
            seconds = (double)(x.Phase.To - x.Phase.From) / Stopwatch.Frequency,
            delivered = x.Latency.Samples,
            p50Ms = x.Latency.P50Ms,
            p99Ms = x.Latency.P99Ms,
        }).ToList(),
        withRules = Arm(WithRules),
        withoutPatterns = Arm(WithoutPatterns),
        ratioP50 = P50Ratio,
        ratioP99 = P99Ratio,
        ratioThroughput = ThroughputRatio,
    };

    private static object Arm(RulesAbArm a) => new
    {
        seconds = a.Seconds,
        delivered = a.Latency.Samples,
        deliveredPerSecond = a.DeliveredPerSecond,
        p50Ms = a.Latency.P50Ms,
        p99Ms = a.Latency.P99Ms,
        meanMs = a.Latency.MeanMs,
        maxMs = a.Latency.MaxMs,
    };

    private static string Name(PhaseArm arm) => arm == PhaseArm.Treatment ? "+rules" : "-patterns";
}
