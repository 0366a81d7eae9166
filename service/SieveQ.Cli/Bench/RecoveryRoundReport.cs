using System.Diagnostics;
using System.Globalization;
using SieveQ.Bft.Hosting.Bench;

namespace SieveQ.Cli.Bench;

/// <summary>
/// What `bench recovery` measured in one deployment: the steady load before the round (the baseline), the round in
/// windows (latency by the window a message was sent in), the load after it, and what was lost; the ratio the issue
/// holds the round to is the worst window's p99 over the steady p99.
/// </summary>
internal sealed record RecoveryRoundReport(
    IReadOnlyList<(MeasuredPhase Phase, LatencySummary Latency)> Phases, bool RoundDone, string RoundStatus, double RoundSeconds, long Sent, long Received)
{
    private IEnumerable<(MeasuredPhase Phase, LatencySummary Latency)> Windows => Phases.Where(p => p.Phase.Arm == PhaseArm.Treatment);

    private (MeasuredPhase Phase, LatencySummary Latency) SteadyPhase => Phases.First(p => p.Phase.Label == "steady");

    public LatencySummary Steady => SteadyPhase.Latency;

    public (MeasuredPhase Phase, LatencySummary Latency) Worst => Windows.MaxBy(w => w.Latency.Samples == 0 ? double.MaxValue : w.Latency.P99Ms);

    /// <summary>Windows of the round in which nothing sent was delivered: the ordering stood still for their length.</summary>
    public int EmptyWindows => Windows.Count(w => w.Latency.Samples == 0);

    public double WorstP99Ratio => Worst.Latency.Samples == 0 ? double.PositiveInfinity : BenchRatio.Of(Worst.Latency.P99Ms, Steady.P99Ms);

    /// <summary>Sent and never read (the receiver's SDK drops duplicates, so more read than sent would be a bug too: <see cref="Extra"/>).</summary>
    public long Lost => Math.Max(0, Sent - Received);

    public long Extra => Math.Max(0, Received - Sent);

    public static RecoveryRoundReport From(MeasuredPhases phases, bool done, string status, double roundSeconds, E2eFigures figures) =>
        new([.. phases.Phases.Select(p => (p, phases.Phase(p.Index)))], done, status, roundSeconds,
            figures.SentInAll ?? throw new InvalidOperationException("a run with phases counts every message"), figures.ReceivedInAll ?? 0);

    public IEnumerable<string> Lines()
    {
        var c = CultureInfo.InvariantCulture;
        foreach (var (p, l) in Phases)
        {
            var seconds = Seconds(p);
            yield return string.Format(c, "  {0,-6} {1,5:0.0} s  delivered {2,8:0}/s  p50 {3,8:0.00} ms  p99 {4,8:0.00} ms  max {5,8:0.00} ms",
                p.Label, seconds, BenchRatio.Of(l.Samples, seconds), l.P50Ms, l.P99Ms, l.MaxMs);
        }
        yield return $"round        {(RoundDone ? "done" : "NOT done")} in {RoundSeconds.ToString("0.0", c)} s: {RoundStatus}";
        yield return string.Format(c, "messages     sent {0} (warm-up included), read by the receiver {1}: lost {2}, extra {3}", Sent, Received, Lost, Extra);
        yield return string.Format(c, "ratio (worst window of the round / steady load before it, one deployment): p99 x{0:0.00} ({1:0.00} ms / {2:0.00} ms){3}",
            WorstP99Ratio, Worst.Latency.P99Ms, Steady.P99Ms, EmptyWindows > 0 ? $"; {EmptyWindows} window(s) delivered nothing" : "");
    }

    public object Json() => new
    {
        roundDone = RoundDone,
        roundStatus = RoundStatus,
        roundSeconds = RoundSeconds,
        sent = Sent,
        received = Received,
        lost = Lost,
        extra = Extra,
        steady = Figures(SteadyPhase),
        windows = Windows.Select(Figures).ToList(),
        after = Phases.Where(p => p.Phase.Label == "after").Select(Figures).FirstOrDefault(),
        worstWindowP99Ms = Worst.Latency.P99Ms,
        emptyWindows = EmptyWindows,
        ratioWorstP99 = double.IsFinite(WorstP99Ratio) ? WorstP99Ratio : (double?)null,
    };

    private static object Figures((MeasuredPhase Phase, LatencySummary Latency) x) => new
    {
        label = x.Phase.Label,
        seconds = Seconds(x.Phase),
        delivered = x.Latency.Samples,
        p50Ms = x.Latency.P50Ms,
        p99Ms = x.Latency.P99Ms,
        maxMs = x.Latency.MaxMs,
    };

    private static double Seconds(MeasuredPhase p) => (double)(p.To - p.From) / Stopwatch.Frequency;
}
