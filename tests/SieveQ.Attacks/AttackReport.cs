using System.Globalization;
using System.Text.Json;
using SieveQ.Cli.Charts;

namespace SieveQ.Attacks;

/// <summary>The end of an attack run: the summary lines, the JSON document and the Figure-8-style plot.</summary>
internal static class AttackReport
{
    public static void Print(AttackFigures f, TextWriter output)
    {
        var inv = CultureInfo.InvariantCulture;
        output.WriteLine(string.Create(inv, $"before   {f.BeforeWindow.PerSecond,8:0} msg/s  p50 {f.BeforeWindow.P50Ms,7:0.0} ms  p99 {f.BeforeWindow.P99Ms,7:0.0} ms"));
        output.WriteLine(string.Create(inv, $"during   {f.DuringWindow.PerSecond,8:0} msg/s  p50 {f.DuringWindow.P50Ms,7:0.0} ms  p99 {f.DuringWindow.P99Ms,7:0.0} ms  attack {f.AttackApplied} actions"));
        output.WriteLine(string.Create(inv, $"after    {f.AfterWindow.PerSecond,8:0} msg/s  p50 {f.AfterWindow.P50Ms,7:0.0} ms  p99 {f.AfterWindow.P99Ms,7:0.0} ms"));
        output.WriteLine(string.Create(inv, $"ratio (during / before) throughput {f.ThroughputRatio:0.000}, p99 x{f.P99Ratio:0.00}"));
        foreach (var (sender, (sent, delivered)) in f.PerSender.OrderBy(kv => kv.Key))
        {
            output.WriteLine(string.Create(inv, $"sender {sender}: {sent} accepted, {delivered} delivered in order"));
        }
        output.WriteLine(f.ExactlyOnce
            ? "exactly once: every accepted legitimate message delivered once, in order, unaltered"
            : string.Create(inv, $"NOT exactly once: {f.Lost} lost, {f.Violations} violations{(f.FirstViolations.Count > 0 ? ": " + string.Join("; ", f.FirstViolations) : "")}"));
        if (f.AttackerMessagesDelivered > 0)
        {
            output.WriteLine(string.Create(inv, $"attacker's own messages delivered (within its grant): {f.AttackerMessagesDelivered}"));
        }
        if (f.Watched is { } watched && f.Seconds.Any(x => x.RssMiB is not null))
        {
            var (b, d, a) = f.RssWindows;
            output.WriteLine(string.Create(inv, $"{watched} RSS MiB: at most {b:0.0} before, {d:0.0} during, {a:0.0} after (last {f.Seconds.LastOrDefault(x => x.RssMiB is not null)?.RssMiB:0.0})"));
        }
        output.WriteLine("countermeasure counted: " + string.Join(", ", f.CountermeasureCounts.Select(kv => string.Create(inv, $"{kv.Key} {kv.Value}"))));
    }

    public static string Json(AttackFigures f)
    {
        static double? Finite(double d) => double.IsFinite(d) ? d : null;
        object Window((double PerSecond, double P50Ms, double P99Ms) w) => new { deliveredPerSecond = Finite(w.PerSecond), p50Ms = Finite(w.P50Ms), p99Ms = Finite(w.P99Ms) };
        var s = f.Settings;
        var doc = new
        {
            benchmark = "attack",
            kind = AttackKinds.Name(s.Kind),
            attack = f.AttackDescription,
            countermeasures = s.Countermeasures,
            countermeasure = f.Countermeasure,
            rate = s.Rate,
            size = s.Size,
            attackRate = s.AttackRate,
            warmupSeconds = s.Warmup.TotalSeconds,
            beforeSeconds = s.Before.TotalSeconds,
            duringSeconds = s.During.TotalSeconds,
            afterSeconds = s.After.TotalSeconds,
            machine = new { Environment.ProcessorCount, os = Environment.OSVersion.ToString() },
            watched = f.Watched,
            perSecond = f.Seconds.Select(x => new { second = x.Second, delivered = x.Delivered, p50Ms = Finite(x.P50Ms), p99Ms = Finite(x.P99Ms), attack = x.AttackActions, rssMiB = x.RssMiB }),
            rssMaxMiB = f.Watched is null ? null : new { before = Finite(f.RssWindows.Before), during = Finite(f.RssWindows.During), after = Finite(f.RssWindows.After) },
            before = Window(f.BeforeWindow),
            during = Window(f.DuringWindow),
            after = Window(f.AfterWindow),
            ratioThroughput = Finite(f.ThroughputRatio),
            ratioP99 = Finite(f.P99Ratio),
            senders = f.PerSender.OrderBy(kv => kv.Key).Select(kv => new { sender = kv.Key, accepted = kv.Value.Sent, deliveredInOrder = kv.Value.Delivered }),
            lost = f.Lost,
            violations = f.Violations,
            firstViolations = f.FirstViolations,
            exactlyOnce = f.ExactlyOnce,
            attackApplied = f.AttackApplied,
            attackerMessagesDelivered = f.AttackerMessagesDelivered,
            countermeasureCounts = f.CountermeasureCounts,
        };
        return JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true });
    }

    /// <summary>Like the paper's Figure 8: legitimate deliveries per second with the attack's own rate, and p50/p99 per second; the attack window is shaded by its rate line.</summary>
    public static byte[] Plot(AttackFigures f)
    {
        var s = f.Settings;
        var name = AttackKinds.Name(s.Kind) + (s.Countermeasures ? "" : " (no countermeasures)");
        var window = new ChartSeries("attack window", ChartColors.Gray,
        [
            (s.Before.TotalSeconds, 0), (s.Before.TotalSeconds, f.Seconds.Max(x => (double)x.Delivered)),
            (double.NaN, double.NaN),
            ((s.Before + s.During).TotalSeconds, 0), ((s.Before + s.During).TotalSeconds, f.Seconds.Max(x => (double)x.Delivered)),
        ]);
        var throughput = new LineChart(
            $"{name}: legitimate deliveries, {s.Rate} msg/s of {s.Size} B offered",
            "second", "msg/s",
            [Line("legitimate delivered/s", ChartColors.Blue, f, x => x.Delivered), Line("attack actions/s", ChartColors.Red, f, x => x.AttackActions), window]);
        var latency = new LineChart(
            "Latency of legitimate deliveries, per second (sender SDK to receiver SDK)",
            "second", "ms",
            [Line("p50", ChartColors.Green, f, x => x.P50Ms), Line("p99", ChartColors.Orange, f, x => x.P99Ms)]);
        if (f.Watched is null || !f.Seconds.Any(x => x.RssMiB is not null))
        {
            return ChartSheet.Render(throughput, latency);
        }
        var memory = new LineChart($"Resident memory of {f.Watched} (the attacked process), per second", "second", "MiB",
            [Line("RSS", ChartColors.Purple, f, x => x.RssMiB ?? double.NaN)]);
        return ChartSheet.Render(throughput, latency, memory);
    }

    private static ChartSeries Line(string name, uint color, AttackFigures f, Func<SecondFigures, double> y) =>
        new(name, color, f.Seconds.Select(x => (x.Second + 0.5, y(x))).ToList());
}
