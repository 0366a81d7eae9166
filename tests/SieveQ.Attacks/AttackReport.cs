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
        foreach (var a in f.Attacks)
        {
            if (f.Attacks.Count > 1)
            {
                output.WriteLine(string.Create(inv, $"{AttackKinds.Name(a.Kind)} (seconds {a.From}-{a.To}; before {a.BeforeFrom}-{a.From}, after {a.To}-{a.AfterTo})"));
            }
            output.WriteLine(string.Create(inv, $"before   {a.Before.PerSecond,8:0} msg/s  p50 {a.Before.P50Ms,7:0.0} ms  p99 {a.Before.P99Ms,7:0.0} ms"));
            output.WriteLine(string.Create(inv, $"during   {a.During.PerSecond,8:0} msg/s  p50 {a.During.P50Ms,7:0.0} ms  p99 {a.During.P99Ms,7:0.0} ms  attack {a.Applied} actions"));
            output.WriteLine(string.Create(inv, $"after    {a.After.PerSecond,8:0} msg/s  p50 {a.After.P50Ms,7:0.0} ms  p99 {a.After.P99Ms,7:0.0} ms"));
            output.WriteLine(string.Create(inv, $"ratio (during / before) throughput {a.ThroughputRatio:0.000}, p99 x{a.P99Ratio:0.00}"));
            if (a.Watched is { } watched && f.Seconds.Any(x => x.RssMiB?.ContainsKey(watched) == true))
            {
                var (b, d, af) = a.RssWindows(f.Seconds);
                output.WriteLine(string.Create(inv, $"{watched} RSS MiB: at most {b:0.0} before, {d:0.0} during, {af:0.0} after"));
            }
            output.WriteLine("countermeasure counted: " + string.Join(", ", a.CountermeasureCounts.Select(kv => string.Create(inv, $"{kv.Key} {kv.Value}"))));
        }
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
    }

    /// <summary>
    /// One shape whatever the number of kinds: the run's settings, each second, each legitimate sender's verdict, and
    /// under <c>attacks</c> one entry per attack with its windows, figures and countermeasure counts.
    /// </summary>
    public static string Json(AttackFigures f)
    {
        static double? Finite(double d) => double.IsFinite(d) ? d : null;
        static object Window(WindowFigures w) => new { deliveredPerSecond = Finite(w.PerSecond), p50Ms = Finite(w.P50Ms), p99Ms = Finite(w.P99Ms) };
        var s = f.Settings;
        var doc = new
        {
            benchmark = "attack",
            kinds = s.Kinds.Select(AttackKinds.Name),
            countermeasures = s.Countermeasures,
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
            senders = f.PerSender.OrderBy(kv => kv.Key).Select(kv => new { sender = kv.Key, accepted = kv.Value.Sent, deliveredInOrder = kv.Value.Delivered }),
            lost = f.Lost,
            violations = f.Violations,
            firstViolations = f.FirstViolations,
            exactlyOnce = f.ExactlyOnce,
            attackerMessagesDelivered = f.AttackerMessagesDelivered,
            attacks = f.Attacks.Select(a =>
            {
                var (rb, rd, ra) = a.RssWindows(f.Seconds);
                return new
                {
                    kind = AttackKinds.Name(a.Kind),
                    attack = a.Description,
                    countermeasure = a.Countermeasure,
                    beforeFromSecond = a.BeforeFrom,
                    fromSecond = a.From,
                    toSecond = a.To,
                    afterToSecond = a.AfterTo,
                    before = Window(a.Before),
                    during = Window(a.During),
                    after = Window(a.After),
                    ratioThroughput = Finite(a.ThroughputRatio),
                    ratioP99 = Finite(a.P99Ratio),
                    attackApplied = a.Applied,
                    countermeasureCounts = a.CountermeasureCounts,
                    watched = a.Watched,
                    rssMaxMiB = a.Watched is null ? null : new { before = Finite(rb), during = Finite(rd), after = Finite(ra) },
                };
            }),
        };
        return JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true });
    }

    /// <summary>Like the paper's Figure 8: legitimate deliveries per second with the attacks' own rate, and p50/p99 per second; each attack's window is marked by two vertical lines.</summary>
    public static byte[] Plot(AttackFigures f)
    {
        var s = f.Settings;
        var name = (f.Attacks.Count == 1 ? f.Name : $"{f.Attacks.Count} attacks in turn") + (s.Countermeasures ? "" : " (no countermeasures)");
        var top = f.Seconds.Select(x => (double)x.Delivered).DefaultIfEmpty(0).Max();
        var edges = new List<(double X, double Y)>();
        foreach (var a in f.Attacks)
        {
            edges.AddRange([(a.From, 0), (a.From, top), (double.NaN, double.NaN), (a.To, 0), (a.To, top), (double.NaN, double.NaN)]);
        }
        var window = new ChartSeries(f.Attacks.Count == 1 ? "attack window" : $"attack windows: {string.Join(", ", f.Attacks.Select(a => AttackKinds.Name(a.Kind)))}", ChartColors.Gray, edges);
        var throughput = new LineChart(
            $"{name}: legitimate deliveries, {s.Rate} msg/s of {s.Size} B offered",
            "second", "msg/s",
            [Line("legitimate delivered/s", ChartColors.Blue, f, x => x.Delivered), Line("attack actions/s", ChartColors.Red, f, x => x.AttackActions), window]);
        var latency = new LineChart(
            "Latency of legitimate deliveries, per second (sender SDK to receiver SDK)",
            "second", "ms",
            [Line("p50", ChartColors.Green, f, x => x.P50Ms), Line("p99", ChartColors.Orange, f, x => x.P99Ms)]);
        var watched = f.Watched.Where(w => f.Seconds.Any(x => x.RssMiB?.ContainsKey(w) == true)).ToList();
        if (watched.Count == 0)
        {
            return ChartSheet.Render(throughput, latency);
        }
        uint[] colors = [ChartColors.Purple, ChartColors.Brown, ChartColors.Pink];
        var memory = new LineChart($"Resident memory of {string.Join(", ", watched)} (the attacked processes), per second", "second", "MiB",
            [.. watched.Select((w, i) => Line($"{w} RSS", colors[i % colors.Length], f, x => x.RssMiB is { } r && r.TryGetValue(w, out var m) ? m : double.NaN))]);
        return ChartSheet.Render(throughput, latency, memory);
    }

    private static ChartSeries Line(string name, uint color, AttackFigures f, Func<SecondFigures, double> y) =>
        new(name, color, f.Seconds.Select(x => (x.Second + 0.5, y(x))).ToList());
}
