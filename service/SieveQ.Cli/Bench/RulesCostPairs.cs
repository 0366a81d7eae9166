namespace SieveQ.Cli.Bench;

/// <summary>One run with routes only and one with the rule set, back to back, and their ratios.</summary>
internal sealed record RulesCostPair(E2eFigures RoutesOnly, E2eFigures WithRules)
{
    public double ThroughputRatio => RulesCostPairs.Ratio(WithRules.DeliveredPerSecond, RoutesOnly.DeliveredPerSecond);
    public double P50Ratio => RulesCostPairs.Ratio(WithRules.Latency.P50Ms, RoutesOnly.Latency.P50Ms);
    public double P99Ratio => RulesCostPairs.Ratio(WithRules.Latency.P99Ms, RoutesOnly.Latency.P99Ms);
}

/// <summary>
/// The cost of a rule set as the median over several pairs of runs. Near the knee of the latency curve
/// one pair says little: on the 2-core VM two pairs at 10,000 msg/s gave p50 ratios of 2.06 and 0.86, and
/// two runs with the same settings gave p50 182 and 450 ms. So the bench alternates which run of a
/// pair goes first (drift over time then favours neither) and reports every pair and the median.
/// </summary>
internal static class RulesCostPairs
{
    /// <summary>a / b, or 0 when b is not positive (a run that delivered nothing).</summary>
    public static double Ratio(double a, double b) => b > 0 ? a / b : 0;

    /// <summary>Whether pair <paramref name="index"/> runs the rule set first.</summary>
    public static bool RulesFirst(int index) => index % 2 == 1;

    public static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        if (sorted.Length == 0)
        {
            return 0;
        }
        var mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    public static string Summary(IReadOnlyList<RulesCostPair> pairs) =>
        $"ratio (rules / no rules), median of {pairs.Count} pair{(pairs.Count == 1 ? "" : "s")}: "
        + $"throughput {Median(pairs.Select(p => p.ThroughputRatio)):0.000}, "
        + $"p50 latency x{Median(pairs.Select(p => p.P50Ratio)):0.000} (pairs {string.Join(", ", pairs.Select(p => p.P50Ratio.ToString("0.00", System.Globalization.CultureInfo.InvariantCulture)))}), "
        + $"p99 latency x{Median(pairs.Select(p => p.P99Ratio)):0.000}";
}
