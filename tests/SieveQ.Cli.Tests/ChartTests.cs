using SieveQ.Cli.Charts;

namespace SieveQ.Cli.Tests;

public sealed class ChartTests
{
    [Fact]
    public void Crc32_matches_the_standard_check_value()
    {
        Assert.Equal(0xCBF43926u, PngTestReader.BitwiseCrc32("123456789"u8));
        Assert.Equal(0xCBF43926u, PngWriter.Crc32("123456789"u8));
    }

    [Fact]
    public void PngWriter_round_trips_exact_pixels()
    {
        uint[] rgba = [0xFF000080, 0x00FF00FF, 0x0000FFFF, 0x12345678, 0xFFFFFFFF, 0x00000000];
        using var stream = new MemoryStream();
        PngWriter.Write(stream, 3, 2, rgba);

        var png = PngTestReader.Read(stream.ToArray());

        Assert.Equal((3, 2, 4), (png.Width, png.Height, png.Channels));
        Assert.Equal(["IHDR", "IDAT", "IEND"], png.ChunkTypes);
        Assert.Equal(2 * (1 + (3 * 4)), png.Raw.Length);
        for (var i = 0; i < rgba.Length; i++)
        {
            var (x, y) = (i % 3, i / 3);
            Assert.Equal(rgba[i] >> 8, png.Rgb(x, y));
            Assert.Equal((byte)rgba[i], png.Alpha(x, y));
        }
    }

    [Fact]
    public void PngWriter_rejects_a_pixel_count_that_does_not_match()
    {
        using var stream = new MemoryStream();
        Assert.Throws<ArgumentException>(() => PngWriter.Write(stream, 3, 3, new uint[8]));
    }

    [Fact]
    public void LineChart_renders_a_valid_png_with_the_series_colour()
    {
        var points = Enumerable.Range(0, 60).Select(i => ((double)i, 1000.0 + (37.0 * i))).ToArray();
        var chart = new LineChart("Throughput", "Time (s)", "Msgs/s", [new ChartSeries("sieveq", ChartColors.Orange, points)]);

        var png = PngTestReader.Read(chart.Render(900, 500));

        Assert.Equal((900, 500), (png.Width, png.Height));
        Assert.Equal(png.Height * png.Stride, png.Raw.Length);
        for (var y = 0; y < png.Height; y++)
        {
            Assert.Equal(0, png.Raw[y * png.Stride]);
        }

        Assert.Equal(255, png.Alpha(0, 0));
        Assert.Equal(ChartColors.White, png.Rgb(0, 0));
        Assert.True(png.Count(ChartColors.Orange) > 500, "the series line should be drawn");
        Assert.True(png.Count(ChartColors.Black) > 200, "title, labels and tick labels should be drawn");
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

        var png = PngTestReader.Read(ChartSheet.Render(600, 300, throughput, latency));
        Assert.Equal((600, 600), (png.Width, png.Height));
        Assert.Equal(png.Height * png.Stride, png.Raw.Length);

        var canvas = ChartSheet.Draw(600, 300, throughput, latency);
        Assert.True(CountRows(canvas, ChartColors.Blue, 0, 300) > 0);
        Assert.Equal(0, CountRows(canvas, ChartColors.Blue, 300, 600));
        Assert.True(CountRows(canvas, ChartColors.Green, 300, 600) > 100);
        Assert.Equal(0, CountRows(canvas, ChartColors.Green, 0, 300));
    }

    [Fact]
    public void Cdf_is_monotone_and_ends_at_100_percent()
    {
        var cdf = ChartSeries.Cdf("x", ChartColors.Red, [5, 1, 3, double.NaN, 2, 4], maxPoints: 3);
        Assert.Equal([(1.0, 20.0), (3.0, 60.0), (5.0, 100.0)], cdf.Points);
    }

    [Fact]
    public void Text_draws_glyph_pixels_inside_the_cell()
    {
        var canvas = new Canvas(20, 10, ChartColors.White);
        var width = canvas.Text(1, 1, "1", ChartColors.Red);

        Assert.Equal(5, width);
        // Glyph '1': rows ..#.. / .##.. / ..#.. x4 / .###.
        Assert.Equal(ChartColors.Red, canvas[3, 1]);
        Assert.Equal(ChartColors.White, canvas[1, 1]);
        Assert.Equal(ChartColors.Red, canvas[2, 2]);
        Assert.Equal(ChartColors.Red, canvas[2, 7]);
        Assert.Equal(ChartColors.Red, canvas[4, 7]);
        var red = 0;
        for (var y = 0; y < canvas.Height; y++)
        {
            for (var x = 0; x < canvas.Width; x++)
            {
                if (canvas[x, y] == ChartColors.Red)
                {
                    red++;
                    Assert.InRange(x, 1, 5);
                    Assert.InRange(y, 1, 7);
                }
            }
        }

        Assert.Equal(10, red);
    }

    [Fact]
    public void Text_maps_lower_case_to_upper_case_and_space_draws_nothing()
    {
        var lower = new Canvas(40, 9);
        var upper = new Canvas(40, 9);
        lower.Text(0, 0, "ab c", ChartColors.Black);
        upper.Text(0, 0, "AB C", ChartColors.Black);
        Assert.True(lower.Pixels.SequenceEqual(upper.Pixels));

        var blank = new Canvas(12, 9);
        blank.Text(0, 0, "  ", ChartColors.Black);
        Assert.DoesNotContain(ChartColors.Black, blank.Pixels.ToArray());

        foreach (var c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ .,:/%()-_=+")
        {
            Assert.True(BitmapFont.Supports(c), $"missing glyph '{c}'");
        }
    }

    [Fact]
    public void Text_scale_enlarges_each_font_pixel()
    {
        var canvas = new Canvas(20, 20);
        canvas.Text(0, 0, "-", ChartColors.Blue, scale: 2);
        // '-' is row 3, all five columns: at scale 2 that is rows 6-7, columns 0-9.
        Assert.Equal(20, canvas.Pixels.ToArray().Count(p => p == ChartColors.Blue));
        Assert.Equal(ChartColors.Blue, canvas[9, 7]);
    }

    [Fact]
    public void Line_connects_its_endpoints()
    {
        var canvas = new Canvas(10, 10);
        canvas.Line(1, 8, 8, 2, ChartColors.Green);
        Assert.Equal(ChartColors.Green, canvas[1, 8]);
        Assert.Equal(ChartColors.Green, canvas[8, 2]);
        Assert.Equal(8, canvas.Pixels.ToArray().Count(p => p == ChartColors.Green)); // one pixel per column

        canvas.Line(-5, 0, 100, 0, ChartColors.Red, thickness: 2); // clipped, no throw
        Assert.Equal(ChartColors.Red, canvas[9, 0]);
    }

    [Theory]
    [InlineData(0, 97, 5, 0, 100, 20)]
    [InlineData(0.3, 0.87, 5, 0.2, 1.0, 0.2)]
    [InlineData(12, 12, 4, 10, 14, 1)]
    [InlineData(0, 0, 4, -1, 1, 0.5)]
    public void AxisScale_picks_nice_steps(double min, double max, int intervals, double niceMin, double niceMax, double step)
    {
        var scale = AxisScale.Nice(min, max, intervals);
        Assert.Equal(niceMin, scale.Min, 9);
        Assert.Equal(niceMax, scale.Max, 9);
        Assert.Equal(step, scale.Step, 9);
        Assert.Equal(scale.Min, scale.Ticks()[0], 9);
        Assert.Equal(scale.Max, scale.Ticks()[^1], 9);
    }

    [Theory]
    [InlineData(0, 1, 0.2, 0.6, "0.6")]
    [InlineData(0, 100, 20, 40, "40")]
    [InlineData(0, 50_000, 10_000, 30_000, "30K")]
    [InlineData(0, 15_000, 500, 12_500, "12.5K")]
    [InlineData(0, 2_000_000_000, 500_000_000, 1_500_000_000, "1.5G")]
    [InlineData(-10, 10, 5, 0, "0")]
    public void AxisScale_formats_tick_labels(double min, double max, double step, double value, string expected) =>
        Assert.Equal(expected, new AxisScale(min, max, step).Format(value));

    private static int CountRows(Canvas canvas, uint color, int fromY, int toY)
    {
        var n = 0;
        for (var y = fromY; y < toY; y++)
        {
            for (var x = 0; x < canvas.Width; x++)
            {
                n += canvas[x, y] == color ? 1 : 0;
            }
        }

        return n;
    }
}
