namespace SieveQ.Cli.Charts;

/// <summary>Renders several <see cref="LineChart"/> panels stacked vertically into one PNG.</summary>
internal static class ChartSheet
{
    public const int DefaultWidth = 900;
    public const int DefaultPanelHeight = 500;

    /// <summary>Panels of <see cref="DefaultWidth"/> x <see cref="DefaultPanelHeight"/>, top to bottom.</summary>
    public static byte[] Render(params LineChart[] panels) => Render(DefaultWidth, DefaultPanelHeight, panels);

    /// <summary>Panels of <paramref name="width"/> x <paramref name="panelHeight"/>, top to bottom.</summary>
    public static byte[] Render(int width, int panelHeight, params LineChart[] panels) =>
        Draw(width, panelHeight, panels).ToPng();

    /// <summary>Like <see cref="Render(int, int, LineChart[])"/> but returns the raster.</summary>
    public static Canvas Draw(int width, int panelHeight, params LineChart[] panels)
    {
        ArgumentNullException.ThrowIfNull(panels);
        ArgumentOutOfRangeException.ThrowIfZero(panels.Length);
        ArgumentOutOfRangeException.ThrowIfLessThan(width, 200);
        ArgumentOutOfRangeException.ThrowIfLessThan(panelHeight, 120);
        var canvas = new Canvas(width, checked(panelHeight * panels.Length));
        for (var i = 0; i < panels.Length; i++)
        {
            ArgumentNullException.ThrowIfNull(panels[i], nameof(panels));
            var top = i * panelHeight;
            if (i > 0)
            {
                canvas.FillRect(0, top, width, 1, ChartColors.Grid);
            }

            panels[i].Draw(canvas, 0, top, width, panelHeight);
        }

        return canvas;
    }
}
