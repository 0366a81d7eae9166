using ScottPlot;

namespace SieveQ.Cli.Charts;

/// <summary>
/// A line chart: title, axis labels, grid, and a legend to the right of the plot, drawn by ScottPlot.
/// </summary>
/// <param name="Title">Drawn centred above the plot.</param>
/// <param name="XLabel">Drawn under the X axis.</param>
/// <param name="YLabel">Drawn beside the Y axis.</param>
/// <param name="Series">The lines, drawn in order (later ones on top).</param>
internal sealed record LineChart(string Title, string XLabel, string YLabel, IReadOnlyList<ChartSeries> Series)
{
    private const float LineWidth = 2;

    /// <summary>Whether the Y range always includes zero (throughput); set false for ranges far from zero.</summary>
    public bool YFromZero { get; init; } = true;

    /// <summary>Renders this chart alone as a PNG.</summary>
    public byte[] Render(int width = ChartSheet.DefaultWidth, int height = ChartSheet.DefaultPanelHeight) =>
        ChartSheet.Render(width, height, this);

    /// <summary>The chart as a ScottPlot plot, its axes fitted to the data.</summary>
    internal Plot ToPlot()
    {
        var plot = new Plot();
        plot.Title(Title ?? "");
        plot.XLabel(XLabel ?? "");
        plot.YLabel(YLabel ?? "");
        foreach (var series in Series)
        {
            AddSeries(plot, series);
        }

        plot.ShowLegend(Edge.Right);
        FitAxes(plot);
        return plot;
    }

    /// <summary>One scatter per run of finite points, so a non-finite point breaks the line; only the first run is named in the legend.</summary>
    private static void AddSeries(Plot plot, ChartSeries series)
    {
        var color = Color.FromHex($"#{series.Color:X6}");
        var named = false;
        foreach (var run in FiniteRuns(series.Points))
        {
            var line = plot.Add.ScatterLine(run.Select(p => p.X).ToArray(), run.Select(p => p.Y).ToArray(), color);
            line.LineWidth = LineWidth;
            if (run.Count == 1)
            {
                line.MarkerShape = MarkerShape.FilledSquare;
                line.MarkerSize = 4;
            }

            if (!named)
            {
                line.LegendText = series.Name;
                named = true;
            }
        }
    }

    private static IEnumerable<List<(double X, double Y)>> FiniteRuns(IReadOnlyList<(double X, double Y)> points)
    {
        var run = new List<(double X, double Y)>();
        foreach (var p in points)
        {
            if (double.IsFinite(p.X) && double.IsFinite(p.Y))
            {
                run.Add(p);
            }
            else if (run.Count > 0)
            {
                yield return run;
                run = [];
            }
        }

        if (run.Count > 0)
        {
            yield return run;
        }
    }

    private void FitAxes(Plot plot)
    {
        var finite = Series.SelectMany(s => s.Points).Where(p => double.IsFinite(p.X) && double.IsFinite(p.Y)).ToList();
        if (finite.Count == 0)
        {
            plot.Axes.SetLimits(0, 1, 0, 1);
            return;
        }

        var (xMin, xMax) = Span(finite.Min(p => p.X), finite.Max(p => p.X));
        var (yMin, yMax) = (finite.Min(p => p.Y), finite.Max(p => p.Y));
        if (YFromZero)
        {
            (yMin, yMax) = (Math.Min(yMin, 0), Math.Max(yMax, 0));
        }

        (yMin, yMax) = Span(yMin, yMax);
        var headroom = (yMax - yMin) * 0.05;
        plot.Axes.SetLimits(xMin, xMax, YFromZero && yMin >= 0 ? yMin : yMin - headroom, yMax + headroom);
    }

    /// <summary>A range of one value is widened so the axis has a scale.</summary>
    private static (double Min, double Max) Span(double min, double max) =>
        max > min ? (min, max) : (min - Math.Max(Math.Abs(min) * 0.1, 0.5), max + Math.Max(Math.Abs(max) * 0.1, 0.5));
}
