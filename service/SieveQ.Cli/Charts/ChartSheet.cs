using ScottPlot;
using SkiaSharp;

namespace SieveQ.Cli.Charts;

/// <summary>Renders several <see cref="LineChart"/> panels stacked vertically into one PNG.</summary>
internal static class ChartSheet
{
    public const int DefaultWidth = 900;
    public const int DefaultPanelHeight = 500;

    /// <summary>Panels of <see cref="DefaultWidth"/> x <see cref="DefaultPanelHeight"/>, top to bottom.</summary>
    public static byte[] Render(params LineChart[] panels) => Render(DefaultWidth, DefaultPanelHeight, panels);

    /// <summary>Panels of <paramref name="width"/> x <paramref name="panelHeight"/>, top to bottom.</summary>
    public static byte[] Render(int width, int panelHeight, params LineChart[] panels)
    {
        ArgumentNullException.ThrowIfNull(panels);
        ArgumentOutOfRangeException.ThrowIfZero(panels.Length);
        ArgumentOutOfRangeException.ThrowIfLessThan(width, 200);
        ArgumentOutOfRangeException.ThrowIfLessThan(panelHeight, 120);
        var info = new SKImageInfo(width, checked(panelHeight * panels.Length), SKColorType.Rgba8888, SKAlphaType.Premul);
        using var surface = SKSurface.Create(info)
            ?? throw new InvalidOperationException($"could not create a {info.Width} x {info.Height} drawing surface");
        var canvas = surface.Canvas;
        canvas.Clear(SKColors.White);
        for (var i = 0; i < panels.Length; i++)
        {
            ArgumentNullException.ThrowIfNull(panels[i], nameof(panels));
            // Each panel is drawn on its own image first: a plot rendering onto a shared canvas clears all of it.
            using var panel = SKBitmap.Decode(panels[i].ToPlot().GetImageBytes(width, panelHeight, ImageFormat.Png));
            canvas.DrawBitmap(panel, 0, i * panelHeight);
        }

        using var image = surface.Snapshot();
        using var png = image.Encode(SKEncodedImageFormat.Png, 100);
        return png.ToArray();
    }
}
