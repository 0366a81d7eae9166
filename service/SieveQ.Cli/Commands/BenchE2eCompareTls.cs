using System.Globalization;
using System.Text.Json;
using SieveQ.Cli.Bench;
using SieveQ.Deployment;
using SieveQ.Sdk;
using SieveQ.Sdk.Sender;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq bench e2e --compare-tls`: the same load through fresh deployments over TLS 1.3 and over cleartext
/// HTTP/2, <c>--rounds</c> rounds in ABBA order in one invocation, then the ratios TLS / cleartext. The direct
/// baseline is not run: the comparison is between two SieveQ deployments. A run that fails is reported and the
/// others still run; the exit code is then 1.
/// </summary>
internal static class BenchE2eCompareTls
{
    public static async Task<int> RunAsync(E2eSettings s, int rounds, FileInfo? json, CancellationToken ct)
    {
        var order = TlsComparison.Order(rounds).ToList();
        Console.WriteLine($"compare TLS  {rounds} round(s), {order.Count} deployments in ABBA order: "
            + string.Join(' ', order.Select(o => TlsComparison.TransportName(o.Tls))));
        var runs = new List<TlsComparisonRun>();
        foreach (var (round, tls) in order)
        {
            var name = $"{TlsComparison.TransportName(tls)}#{round}";
            var before = LoadAverage.OneMinute();
            E2eFigures? figures = null;
            string? error = null;
            try
            {
                figures = await BenchE2eCommand.RunSieveAsync(s with { Cleartext = !tls }, name, null, ct).ConfigureAwait(false);
            }
            catch (Exception e) when (e is DeploymentException or SieveQConfigurationException or SieveQUnavailableException)
            {
                error = e.Message;
                Console.Error.WriteLine($"error: {name}: {e.Message}");
            }
            var after = LoadAverage.OneMinute();
            var load = before is { } b && after is { } a ? (b, a) : ((double, double)?)null;
            if (load is { } l)
            {
                Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "{0,-8} load average {1:0.00} before, {2:0.00} after", name, l.Item1, l.Item2));
            }
            runs.Add(new TlsComparisonRun(round, tls, figures, error, load));
        }

        var comparison = new TlsComparison(runs);
        foreach (var line in comparison.Lines())
        {
            Console.WriteLine(line);
        }
        if (json is not null)
        {
            await File.WriteAllTextAsync(json.FullName, JsonSerializer.Serialize(Json(s, rounds, comparison), new JsonSerializerOptions { WriteIndented = true }), ct).ConfigureAwait(false);
            Console.WriteLine($"wrote {json.FullName}");
        }
        return comparison.Failed == 0 ? 0 : 1;
    }

    private static object Json(E2eSettings s, int rounds, TlsComparison c) => new
    {
        benchmark = "e2e-compare-tls",
        size = s.Size,
        rate = s.Rate?.ToString(CultureInfo.InvariantCulture) ?? "max",
        durationSeconds = s.Duration.TotalSeconds,
        warmupSeconds = s.Warmup.TotalSeconds,
        rounds,
        durability = s.Durability,
        senderOutbox = s.SenderOutbox,
        machine = new { Environment.ProcessorCount, os = Environment.OSVersion.ToString() },
        runs = c.Runs.Select(r => new
        {
            round = r.Round,
            transport = r.Transport,
            error = r.Error,
            loadAverageBefore = r.LoadAverage?.Before,
            loadAverageAfter = r.LoadAverage?.After,
            figures = r.Figures is { } f ? BenchE2eCommand.Json(f) : null,
        }).ToList(),
        tls13 = Summary(c.Tls),
        h2c = Summary(c.Cleartext),
        ratio = c.HasRatios
            ? new
            {
                throughput = c.ThroughputRatio,
                p50 = c.P50Ratio,
                p99 = c.P99Ratio,
                cpuPerMessage = c.CpuRatio,
                cpuPerMessageByKind = c.CpuRatioByKind.ToDictionary(k => k.Kind, k => k.Ratio, StringComparer.Ordinal),
                pairs = c.Pairs.Select(p => new { round = p.Round, throughput = p.Throughput, p50 = p.P50, p99 = p.P99, cpuPerMessage = p.Cpu }).ToList(),
            }
            : null,
    };

    private static object Summary(TransportSummary t) => new
    {
        runs = t.Runs,
        failed = t.Failed,
        deliveredPerSecond = Finite(t.DeliveredPerSecond),
        p50Ms = Finite(t.P50Ms),
        p99Ms = Finite(t.P99Ms),
        cpuMicrosPerMessage = t.CpuPerMessage.ToDictionary(k => k.Kind, k => k.MicrosPerMessage, StringComparer.Ordinal),
    };

    private static double? Finite(double x) => double.IsFinite(x) ? x : null;
}
