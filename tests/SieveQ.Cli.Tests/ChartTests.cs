using SieveQ.Cli.Charts;
using SkiaSharp;

namespace SieveQ.Cli.Tests;

/// <summary>
/// The bench charts drawn by ScottPlot: each PNG is decoded again (by Skia's decoder, not the encoder's
/// own view) and its pixels checked, so a chart that loses a series, a panel or its text fails here.
/// Lines are antialiased, so colours are matched within a small tolerance.
/// </summary>
public sealed class ChartTests
{
    [Fact]
    public void LineChart_renders_a_png_of_the_asked_size_with_the_series_colour_and_text()
    {
        var points = Enumerable.Range(0, 60).Select(i => ((double)i, 1000.0 + (37.0 * i))).ToArray();
        var chart = new LineChart("Throughput", "Time (s)", "Msgs/s", [new ChartSeries("sieveq", ChartColors.Orange, points)]);

        var png = chart.Render(900, 500);

        Assert.Equal([0x89, (byte)'P', (byte)'N', (byte)'G'], png[..4]);
        using var bitmap = SKBitmap.Decode(png);
        Assert.Equal((900, 500), (bitmap.Width, bitmap.Height));
        Assert.Equal(ChartColors.White, Rgb(bitmap.GetPixel(0, 0)));
        Assert.True(Count(bitmap, ChartColors.Orange, 0, 500) > 500, "the series line should be drawn");
        Assert.True(Count(bitmap, ChartColors.Black, 0, 60, tolerance: 60) > 50, "the title should be drawn above the plot");
    }

    [Fact]
    public void ChartSheet_stacks_panels_vertically()
    {
        var throughput = new LineChart("Throughput", "Time (s)", "Msgs/s",
        [
            new ChartSeries("direct", ChartColors.Blue, [(0, 10), (1, 12), (2, 11)]),
            new ChartSeries("sieveq", ChartColors.Orange, [(0, 8), (1, 9), (2, double.NaN), (3, 9)]),
        ]);
        var latency = new LineChart("Latency CDF", "Latency (ms)", "Percentile (%)",
            [ChartSeries.Cdf("sieveq", ChartColors.Green, Enumerable.Range(1, 10_000).Select(i => i / 100.0))]);

        using var bitmap = SKBitmap.Decode(ChartSheet.Render(600, 300, throughput, latency));

        Assert.Equal((600, 600), (bitmap.Width, bitmap.Height));
        Assert.True(Count(bitmap, ChartColors.Blue, 0, 300) > 0);
        Assert.Equal(0, Count(bitmap, ChartColors.Blue, 300, 600));
        Assert.True(Count(bitmap, ChartColors.Green, 300, 600) > 100);
        Assert.Equal(0, Count(bitmap, ChartColors.Green, 0, 300));
    }

    [Fact]
    public void A_non_finite_point_breaks_the_line_and_names_the_series_once()
    {
        var chart = new LineChart("t", "x", "y", [new ChartSeries("split", ChartColors.Red, [(0, 1), (1, 2), (2, double.NaN), (3, 2), (4, 1)])]);

        var plot = chart.ToPlot();

        var lines = plot.GetPlottables().OfType<ScottPlot.Plottables.Scatter>().ToList();
        Assert.Equal(2, lines.Count);
        Assert.Equal(["split", ""], lines.Select(l => l.LegendText ?? ""));
    }

    [Theory]
    [InlineData(true, 0)]
    [InlineData(false, 900)]
    public void The_y_axis_starts_at_zero_only_when_asked(bool fromZero, double lowestAtLeast)
    {
        var chart = new LineChart("t", "x", "y", [new ChartSeries("s", ChartColors.Blue, [(0, 1000), (1, 1100)])]) { YFromZero = fromZero };

        var limits = chart.ToPlot().Axes.GetLimits();

        Assert.True(limits.Bottom <= 0 == fromZero, $"bottom {limits.Bottom}");
        Assert.True(limits.Bottom >= lowestAtLeast - 1e-9 || fromZero);
        Assert.True(limits.Top >= 1100);
        Assert.Equal((0.0, 1.0), (limits.Left, limits.Right));
    }

    [Fact]
    public void A_chart_without_points_still_renders()
    {
        var png = new LineChart("empty", "x", "y", [new ChartSeries("none", ChartColors.Blue, [])]).Render(300, 200);
        using var bitmap = SKBitmap.Decode(png);
        Assert.Equal((300, 200), (bitmap.Width, bitmap.Height));
    }

    [Fact]
    public void ChartSheet_refuses_no_panels_and_tiny_sizes()
    {
        var chart = new LineChart("t", "x", "y", []);
        Assert.Throws<ArgumentOutOfRangeException>(() => ChartSheet.Render(600, 300));
        Assert.Throws<ArgumentOutOfRangeException>(() => ChartSheet.Render(100, 300, chart));
        Assert.Throws<ArgumentOutOfRangeException>(() => ChartSheet.Render(600, 50, chart));
    }

    [Fact]
    public void Cdf_is_monotone_and_ends_at_100_percent()
    {
        var cdf = ChartSeries.Cdf("x", ChartColors.Red, [5, 1, 3, double.NaN, 2, 4], maxPoints: 3);
        Assert.Equal([(1.0, 20.0), (3.0, 60.0), (5.0, 100.0)], cdf.Points);
    }

    private static uint Rgb(SKColor c) => ((uint)c.Red << 16) | ((uint)c.Green << 8) | c.Blue;

    /// <summary>Pixels in rows [fromY, toY) within <paramref name="tolerance"/> of <paramref name="rgb"/> on every channel.</summary>
    private static int Count(SKBitmap bitmap, uint rgb, int fromY, int toY, int tolerance = 8)
    {
        var (r, g, b) = ((int)(rgb >> 16) & 0xFF, (int)(rgb >> 8) & 0xFF, (int)rgb & 0xFF);
        var n = 0;
        for (var y = fromY; y < toY; y++)
        {
            for (var x = 0; x < bitmap.Width; x++)
            {
                var c = bitmap.GetPixel(x, y);
                if (Math.Abs(c.Red - r) <= tolerance && Math.Abs(c.Green - g) <= tolerance && Math.Abs(c.Blue - b) <= tolerance)
                {
                    n++;
                }
            }
        }

        return n;
    }
}
