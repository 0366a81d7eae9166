using System.Globalization;

namespace SieveQ.Cli.Bench;

/// <summary>One deployment run of a TLS comparison: its figures, or why it gave none.</summary>
/// <param name="LoadAverage">The machine's 1-minute load average before and after the run (/proc/loadavg), when known.</param>
internal sealed record TlsComparisonRun(int Round, bool Tls, E2eFigures? Figures, string? Error, (double Before, double After)? LoadAverage = null)
{
    public string Transport => TlsComparison.TransportName(Tls);
}

/// <summary>The completed runs of one transport, averaged: each run weighs the same, whatever it delivered.</summary>
internal sealed record TransportSummary(string Transport, int Runs, int Failed, double DeliveredPerSecond, double P50Ms, double P99Ms,
    IReadOnlyList<(string Kind, double MicrosPerMessage)> CpuPerMessage)
{
    public double TotalCpuPerMessage => CpuPerMessage.FirstOrDefault(c => c.Kind == "total").MicrosPerMessage;
}

/// <summary>
/// `bench e2e --compare-tls`: the same load through a TLS deployment and a cleartext one, alternating within
/// one invocation, and the ratios TLS / cleartext of throughput, latency and CPU per delivered message.
/// </summary>
internal sealed record TlsComparison(IReadOnlyList<TlsComparisonRun> Runs)
{
    public const string TlsName = "tls13";
    public const string CleartextName = "h2c";

    /// <summary>The runs of <paramref name="rounds"/> rounds in ABBA order (TLS first): a drift over the invocation weighs on both sides alike.</summary>
    public static IEnumerable<(int Round, bool Tls)> Order(int rounds) =>
        Enumerable.Range(1, rounds).SelectMany(r => r % 2 == 1 ? new[] { (r, true), (r, false) } : [(r, false), (r, true)]);

    public static string TransportName(bool tls) => tls ? TlsName : CleartextName;

    public TransportSummary Tls => Summary(true);

    public TransportSummary Cleartext => Summary(false);

    /// <summary>Both transports have at least one completed run, so there are ratios.</summary>
    public bool HasRatios => Tls.Runs > 0 && Cleartext.Runs > 0;

    public int Failed => Runs.Count(r => r.Figures is null);

    public double ThroughputRatio => BenchRatio.Of(Tls.DeliveredPerSecond, Cleartext.DeliveredPerSecond);

    public double P50Ratio => BenchRatio.Of(Tls.P50Ms, Cleartext.P50Ms);

    public double P99Ratio => BenchRatio.Of(Tls.P99Ms, Cleartext.P99Ms);

    public double CpuRatio => BenchRatio.Of(Tls.TotalCpuPerMessage, Cleartext.TotalCpuPerMessage);

    /// <summary>TLS / cleartext CPU per message for each kind both transports report.</summary>
    public IReadOnlyList<(string Kind, double Ratio)> CpuRatioByKind =>
        Tls.CpuPerMessage
            .Where(t => Cleartext.CpuPerMessage.Any(c => c.Kind == t.Kind))
            .Select(t => (t.Kind, BenchRatio.Of(t.MicrosPerMessage, Cleartext.CpuPerMessage.First(c => c.Kind == t.Kind).MicrosPerMessage)))
            .ToList();

    /// <summary>The ratios of each round whose two runs both completed: how far single pairs scatter.</summary>
    public IReadOnlyList<(int Round, double Throughput, double P50, double P99, double Cpu)> Pairs =>
        Runs.Where(r => r.Tls && r.Figures is not null)
            .Select(t => (t, c: Runs.FirstOrDefault(r => !r.Tls && r.Round == t.Round && r.Figures is not null)))
            .Where(x => x.c is not null)
            .Select(x => (x.t.Round,
                BenchRatio.Of(x.t.Figures!.DeliveredPerSecond, x.c!.Figures!.DeliveredPerSecond),
                BenchRatio.Of(x.t.Figures.Latency.P50Ms, x.c.Figures.Latency.P50Ms),
                BenchRatio.Of(x.t.Figures.Latency.P99Ms, x.c.Figures.Latency.P99Ms),
                BenchRatio.Of(TotalCpu(x.t.Figures), TotalCpu(x.c.Figures))))
            .ToList();

    public IEnumerable<string> Lines()
    {
        var c = CultureInfo.InvariantCulture;
        foreach (var r in Runs.Where(r => r.Figures is null))
        {
            yield return $"failed       round {r.Round} {r.Transport}: {r.Error}";
        }
        foreach (var t in new[] { Tls, Cleartext })
        {
            yield return string.Format(c, "{0,-6} mean of {1} run(s){2}: delivered {3,9:0}/s  p50 {4,8:0.00} ms  p99 {5,8:0.00} ms  CPU per message {6}",
                t.Transport, t.Runs, t.Failed > 0 ? $" ({t.Failed} failed)" : "", t.DeliveredPerSecond, t.P50Ms, t.P99Ms,
                string.Join("  ", t.CpuPerMessage.Select(k => string.Format(c, "{0} {1:0} us", k.Kind, k.MicrosPerMessage))));
        }
        if (!HasRatios)
        {
            yield return "ratio (TLS / cleartext): none, a transport has no completed run";
            yield break;
        }
        foreach (var p in Pairs)
        {
            yield return string.Format(c, "  round {0}: throughput {1:0.000}, p50 x{2:0.000}, p99 x{3:0.000}, CPU per message x{4:0.000}", p.Round, p.Throughput, p.P50, p.P99, p.Cpu);
        }
        yield return string.Format(c, "ratio (TLS / cleartext, means): throughput {0:0.000}, p50 latency x{1:0.000}, p99 latency x{2:0.000}, CPU per message x{3:0.000} ({4})",
            ThroughputRatio, P50Ratio, P99Ratio, CpuRatio, string.Join(", ", CpuRatioByKind.Where(k => k.Kind != "total").Select(k => string.Format(c, "{0} x{1:0.000}", k.Kind, k.Ratio))));
    }

    private TransportSummary Summary(bool tls)
    {
        var all = Runs.Where(r => r.Tls == tls).ToList();
        var done = all.Where(r => r.Figures is not null).Select(r => r.Figures!).ToList();
        double Mean(Func<E2eFigures, double> f) => done.Count == 0 ? double.NaN : done.Average(f);
        var kinds = done.SelectMany(f => f.Cpu ?? []).Select(k => k.Kind).Distinct(StringComparer.Ordinal)
            .Where(k => done.All(f => f.Cpu?.Any(x => x.Kind == k && double.IsFinite(x.MicrosPerMessage)) == true));
        var cpu = kinds.Select(k => (k, Mean(f => f.Cpu!.First(x => x.Kind == k).MicrosPerMessage))).ToList();
        return new TransportSummary(TransportName(tls), done.Count, all.Count - done.Count,
            Mean(f => f.DeliveredPerSecond), Mean(f => f.Latency.P50Ms), Mean(f => f.Latency.P99Ms), cpu);
    }

    private static double TotalCpu(E2eFigures f) => f.Cpu?.FirstOrDefault(x => x.Kind == "total")?.MicrosPerMessage ?? double.NaN;
}
