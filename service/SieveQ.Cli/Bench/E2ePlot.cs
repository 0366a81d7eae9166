using System.Globalization;
using SieveQ.Cli.Charts;
using SieveQ.Cli.Commands;

namespace SieveQ.Cli.Bench;

/// <summary>The `bench e2e --plot` sheet: delivered messages per second over the run, and the latency CDF, SieveQ against direct.</summary>
internal static class E2ePlot
{
    public static byte[] Render(E2eSettings s, E2eFigures sieve, E2eFigures direct)
    {
        var rate = s.Rate?.ToString(CultureInfo.InvariantCulture) ?? "max";
        var throughput = new LineChart(
            $"Delivered per second, {s.Size} B messages, offered {rate}/s",
            "second of the measured window", "msg/s",
            [PerSecond(sieve, ChartColors.Blue), PerSecond(direct, ChartColors.Orange)]);
        var latency = new LineChart(
            "Latency CDF (sender SDK to receiver SDK)",
            "latency (ms)", "% of deliveries",
            [ChartSeries.Cdf(sieve.Name, ChartColors.Blue, sieve.LatencySamplesMs), ChartSeries.Cdf(direct.Name, ChartColors.Orange, direct.LatencySamplesMs)]);
        return ChartSheet.Render(throughput, latency);
    }

    private static ChartSeries PerSecond(E2eFigures f, uint color) =>
        new(f.Name, color, f.PerSecond.Select((n, i) => ((double)i + 0.5, (double)n)).ToList());
}
