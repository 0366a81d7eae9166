using SieveQ.Bft.Hosting.Bench;
using SieveQ.Cli.Bench;

namespace SieveQ.Cli.Tests;

public sealed class TlsComparisonTests
{
    [Fact]
    public void Rounds_alternate_abba_starting_with_tls()
    {
        Assert.Equal([(1, true), (1, false)], TlsComparison.Order(1));
        Assert.Equal([(1, true), (1, false), (2, false), (2, true), (3, true), (3, false)], TlsComparison.Order(3));
    }

    [Fact]
    public void Ratios_are_tls_over_cleartext_of_each_transports_mean()
    {
        var c = new TlsComparison([
            Run(1, tls: true, perSecond: 900, p50: 30, p99: 90, replica: 1200, bench: 300),
            Run(1, tls: false, perSecond: 1000, p50: 20, p99: 60, replica: 1000, bench: 200),
            Run(2, tls: false, perSecond: 1000, p50: 20, p99: 80, replica: 1000, bench: 200),
            Run(2, tls: true, perSecond: 1100, p50: 10, p99: 70, replica: 1400, bench: 300),
        ]);

        Assert.True(c.HasRatios);
        Assert.Equal((2, 2), (c.Tls.Runs, c.Cleartext.Runs));
        Assert.Equal(1.0, c.ThroughputRatio, 9);           // 1000 / 1000
        Assert.Equal(20.0 / 20.0, c.P50Ratio, 9);          // (30+10)/2 over (20+20)/2
        Assert.Equal(80.0 / 70.0, c.P99Ratio, 9);
        Assert.Equal(1600.0 / 1200.0, c.CpuRatio, 9);      // totals 1500 and 1700 against 1200 twice
        Assert.Equal([("replica-sq", 1.3), ("bench", 1.5), ("total", 1.333333)],
            c.CpuRatioByKind.Select(k => (k.Kind, Math.Round(k.Ratio, 6))));
        Assert.Equal([(1, 0.9), (2, 1.1)], c.Pairs.Select(p => (p.Round, Math.Round(p.Throughput, 9))));
        Assert.Equal(1.5, c.Pairs[0].P50, 9);
        Assert.Equal(0, c.Failed);
        Assert.Contains(c.Lines(), l => l.StartsWith("ratio (TLS / cleartext, means): throughput 1.000, p50 latency x1.000, p99 latency x1.143, CPU per message x1.333", StringComparison.Ordinal));
    }

    [Fact]
    public void A_failed_run_is_reported_and_left_out_of_the_means_and_pairs()
    {
        var c = new TlsComparison([
            Run(1, tls: true, perSecond: 900, p50: 30, p99: 90, replica: 1200, bench: 300),
            new TlsComparisonRun(1, Tls: false, Figures: null, Error: "the deployment did not answer for 30 s"),
            Run(2, tls: false, perSecond: 1000, p50: 20, p99: 80, replica: 1000, bench: 200),
            Run(2, tls: true, perSecond: 1100, p50: 10, p99: 70, replica: 1400, bench: 300),
        ]);

        Assert.Equal(1, c.Failed);
        Assert.Equal((1, 1), (c.Cleartext.Runs, c.Cleartext.Failed));
        Assert.Equal(1000.0 / 1000.0, c.ThroughputRatio, 9);
        Assert.Equal([2], c.Pairs.Select(p => p.Round));
        Assert.Contains("failed       round 1 h2c: the deployment did not answer for 30 s", c.Lines());
    }

    [Fact]
    public void Without_a_completed_run_of_each_transport_there_is_no_ratio()
    {
        var c = new TlsComparison([
            Run(1, tls: true, perSecond: 900, p50: 30, p99: 90, replica: 1200, bench: 300),
            new TlsComparisonRun(1, Tls: false, Figures: null, Error: "failed"),
        ]);

        Assert.False(c.HasRatios);
        Assert.True(double.IsNaN(c.Cleartext.DeliveredPerSecond));
        Assert.Contains("ratio (TLS / cleartext): none, a transport has no completed run", c.Lines());
    }

    private static TlsComparisonRun Run(int round, bool tls, double perSecond, double p50, double p99, double replica, double bench)
    {
        var figures = new E2eFigures($"{TlsComparison.TransportName(tls)}#{round}", (long)perSecond * 10, (long)perSecond * 10, 10, perSecond,
            new LatencySummary(100, p50, p99, p50, p99), [], [])
        {
            Cpu = [new CpuFigure("replica-sq", 4, 1, replica), new CpuFigure("bench", 1, 1, bench), new CpuFigure("total", 5, 2, replica + bench)],
        };
        return new TlsComparisonRun(round, tls, figures, null);
    }
}
