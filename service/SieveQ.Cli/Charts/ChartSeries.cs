namespace SieveQ.Cli.Charts;

/// <summary>One line of a <see cref="LineChart"/>. Non-finite points break the line.</summary>
/// <param name="Name">Legend text.</param>
/// <param name="Color">Line colour, 0xRRGGBB (see <see cref="ChartColors"/>).</param>
/// <param name="Points">Points in drawing order.</param>
internal sealed record ChartSeries(string Name, uint Color, IReadOnlyList<(double X, double Y)> Points)
{
    /// <summary>
    /// An empirical CDF of <paramref name="samples"/>: X is the sample value, Y the percentage of samples
    /// at or below it (0-100], thinned to at most <paramref name="maxPoints"/> points.
    /// </summary>
    public static ChartSeries Cdf(string name, uint color, IEnumerable<double> samples, int maxPoints = 500)
    {
        ArgumentNullException.ThrowIfNull(samples);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxPoints, 2);
        var sorted = samples.Where(double.IsFinite).ToArray();
        Array.Sort(sorted);
        var n = sorted.Length;
        var count = Math.Min(n, maxPoints);
        var points = new (double X, double Y)[count];
        for (var j = 0; j < count; j++)
        {
            var index = count == 1 ? 0 : (int)Math.Round((double)j * (n - 1) / (count - 1));
            points[j] = (sorted[index], 100.0 * (index + 1) / n);
        }

        return new ChartSeries(name, color, points);
    }
}
