using SieveQ.Cli.Bench;

namespace SieveQ.Cli.Tests;

public sealed class RulesCostPairsTests
{
    private static E2eFigures Run(double perSecond, double p50, double p99) =>
        new("run", 100, 100, 1, perSecond, new SieveQ.Bft.Hosting.Bench.LatencySummary(100, p50, p99, p50, p99), [], []);

    [Fact]
    public void The_median_of_pairs_resists_one_noisy_pair()
    {
        RulesCostPair[] pairs =
        [
            new(Run(10_000, 100, 400), Run(10_000, 105, 420)),
            new(Run(10_000, 200, 500), Run(9_900, 80, 450)),   // the routes-only run hit a bad spell
            new(Run(10_000, 100, 400), Run(10_000, 108, 400)),
        ];
        Assert.Equal(1.05, RulesCostPairs.Median(pairs.Select(p => p.P50Ratio)), 3);
        Assert.Equal(1.0, RulesCostPairs.Median(pairs.Select(p => p.ThroughputRatio)), 3);
        Assert.Contains("median of 3 pairs", RulesCostPairs.Summary(pairs));
        Assert.Contains("pairs 1.05, 0.40, 1.08", RulesCostPairs.Summary(pairs));
    }

    [Fact]
    public void An_even_count_takes_the_middle_two_and_the_order_alternates()
    {
        Assert.Equal(2.5, RulesCostPairs.Median([4, 1, 2, 3]));
        Assert.Equal(0, RulesCostPairs.Median([]));
        Assert.False(RulesCostPairs.RulesFirst(0));
        Assert.True(RulesCostPairs.RulesFirst(1));
        Assert.False(RulesCostPairs.RulesFirst(2));
    }
}
