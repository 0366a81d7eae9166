namespace SieveQ.Cli.Charts;

/// <summary>
/// A line chart: title, axis labels, nice numeric ticks, grid, and a legend to the right of the plot.
/// </summary>
/// <param name="Title">Drawn centred above the plot at double size.</param>
/// <param name="XLabel">Drawn centred under the X axis.</param>
/// <param name="YLabel">Drawn above the top of the Y axis.</param>
/// <param name="Series">The lines, drawn in order (later ones on top).</param>
internal sealed record LineChart(string Title, string XLabel, string YLabel, IReadOnlyList<ChartSeries> Series)
{
    private const int Pad = 10;
    private const int TickLength = 4;
    private const int TitleScale = 2;
    private const int LineHeight = BitmapFont.GlyphHeight;
    private const int SwatchWidth = 20;
    private const int LegendRow = 14;

    /// <summary>Whether the Y range always includes zero (throughput); set false for ranges far from zero.</summary>
    public bool YFromZero { get; init; } = true;

    /// <summary>Renders this chart alone as a PNG.</summary>
    public byte[] Render(int width = ChartSheet.DefaultWidth, int height = ChartSheet.DefaultPanelHeight) =>
        ChartSheet.Render(width, height, this);

    /// <summary>Draws the chart into the rectangle (<paramref name="left"/>, <paramref name="top"/>, <paramref name="width"/>, <paramref name="height"/>).</summary>
    internal void Draw(Canvas canvas, int left, int top, int width, int height)
    {
        var (xMin, xMax, yMin, yMax) = DataRange();

        // Vertical layout: title, Y label, plot, tick labels, X label.
        var titleY = top + Pad;
        var yLabelY = titleY + (LineHeight * TitleScale) + 8;
        var plotTop = yLabelY + LineHeight + 6;
        var plotBottom = top + height - Pad - LineHeight - 8 - LineHeight - 3 - TickLength;
        var plotHeight = Math.Max(plotBottom - plotTop, 1);

        var yScale = AxisScale.Nice(yMin, yMax, Math.Max(2, plotHeight / 45));
        var yTicks = yScale.Ticks();
        var yLabelWidth = yTicks.Max(t => BitmapFont.Measure(yScale.Format(t)));

        // Horizontal layout: Y tick labels, plot, legend.
        var legendNames = Series.Select(s => Truncate(s.Name, Math.Max(4, width / 4 / BitmapFont.Advance))).ToArray();
        var legendWidth = legendNames.Length == 0
            ? 0
            : Pad + SwatchWidth + 4 + legendNames.Max(n => BitmapFont.Measure(n));
        var plotLeft = left + Pad + yLabelWidth + 3 + TickLength;
        var plotRight = left + width - Pad - legendWidth;
        var plotWidth = Math.Max(plotRight - plotLeft, 1);

        var xScale = FitXScale(xMin, xMax, plotWidth);
        var xTicks = xScale.Ticks();

        int MapX(double x) => plotLeft + (int)Math.Round(Math.Clamp(xScale.Fraction(x), 0, 1) * plotWidth);
        int MapY(double y) => plotBottom - (int)Math.Round(Math.Clamp(yScale.Fraction(y), 0, 1) * plotHeight);

        // Grid.
        foreach (var t in yTicks)
        {
            canvas.FillRect(plotLeft, MapY(t), plotWidth + 1, 1, ChartColors.Grid);
        }

        foreach (var t in xTicks)
        {
            canvas.FillRect(MapX(t), plotTop, 1, plotHeight + 1, ChartColors.Grid);
        }

        // Series.
        foreach (var series in Series)
        {
            DrawSeries(canvas, series, MapX, MapY);
        }

        // Axes, ticks and tick labels.
        canvas.FillRect(plotLeft, plotTop, 1, plotHeight + 1, ChartColors.Axis);
        canvas.FillRect(plotLeft, plotBottom, plotWidth + 1, 1, ChartColors.Axis);
        foreach (var t in yTicks)
        {
            var y = MapY(t);
            canvas.FillRect(plotLeft - TickLength, y, TickLength, 1, ChartColors.Axis);
            var label = yScale.Format(t);
            canvas.Text(plotLeft - TickLength - 3 - BitmapFont.Measure(label), y - (LineHeight / 2), label, ChartColors.Black);
        }

        foreach (var t in xTicks)
        {
            var x = MapX(t);
            canvas.FillRect(x, plotBottom + 1, 1, TickLength, ChartColors.Axis);
            var label = xScale.Format(t);
            canvas.Text(x - (BitmapFont.Measure(label) / 2), plotBottom + TickLength + 3, label, ChartColors.Black);
        }

        // Labels and title.
        canvas.Text(left + Pad, yLabelY, YLabel ?? "", ChartColors.Black);
        canvas.Text(plotLeft + ((plotWidth - BitmapFont.Measure(XLabel ?? "")) / 2), top + height - Pad - LineHeight, XLabel ?? "", ChartColors.Black);
        var title = Title ?? "";
        canvas.Text(left + ((width - BitmapFont.Measure(title, TitleScale)) / 2), titleY, title, ChartColors.Black, TitleScale);

        // Legend.
        var legendX = plotRight + Pad;
        for (var i = 0; i < legendNames.Length; i++)
        {
            var rowY = plotTop + (i * LegendRow);
            canvas.FillRect(legendX, rowY + 3, SwatchWidth, 2, Series[i].Color);
            canvas.Text(legendX + SwatchWidth + 4, rowY, legendNames[i], ChartColors.Black);
        }
    }

    private static void DrawSeries(Canvas canvas, ChartSeries series, Func<double, int> mapX, Func<double, int> mapY)
    {
        (int X, int Y)? previous = null;
        var drawn = false;
        foreach (var (x, y) in series.Points)
        {
            if (!double.IsFinite(x) || !double.IsFinite(y))
            {
                previous = null;
                continue;
            }

            var current = (X: mapX(x), Y: mapY(y));
            if (previous is { } p)
            {
                canvas.Line(p.X, p.Y, current.X, current.Y, series.Color, thickness: 2);
                drawn = true;
            }

            previous = current;
        }

        if (!drawn && previous is { } only)
        {
            canvas.FillRect(only.X - 1, only.Y - 1, 3, 3, series.Color);
        }
    }

    private static AxisScale FitXScale(double min, double max, int plotWidth)
    {
        // Start dense and thin out until the widest label (plus a gap) fits between ticks.
        for (var intervals = Math.Max(2, plotWidth / 60); ; intervals--)
        {
            var scale = AxisScale.Nice(min, max, intervals);
            var ticks = scale.Ticks();
            var widest = ticks.Max(t => BitmapFont.Measure(scale.Format(t)));
            if (intervals <= 1 || (widest + 12) * ticks.Count <= plotWidth)
            {
                return scale;
            }
        }
    }

    private static string Truncate(string? text, int maxChars)
    {
        text ??= "";
        return text.Length <= maxChars ? text : string.Concat(text.AsSpan(0, maxChars - 2), "..");
    }

    private (double XMin, double XMax, double YMin, double YMax) DataRange()
    {
        double xMin = double.PositiveInfinity, xMax = double.NegativeInfinity;
        double yMin = double.PositiveInfinity, yMax = double.NegativeInfinity;
        foreach (var (x, y) in Series.SelectMany(s => s.Points))
        {
            if (double.IsFinite(x) && double.IsFinite(y))
            {
                (xMin, xMax) = (Math.Min(xMin, x), Math.Max(xMax, x));
                (yMin, yMax) = (Math.Min(yMin, y), Math.Max(yMax, y));
            }
        }

        if (!double.IsFinite(xMin))
        {
            (xMin, xMax, yMin, yMax) = (0, 1, 0, 1);
        }

        if (YFromZero)
        {
            (yMin, yMax) = (Math.Min(yMin, 0), Math.Max(yMax, 0));
        }

        return (xMin, xMax, yMin, yMax);
    }
}
