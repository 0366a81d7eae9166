namespace SieveQ.Cli.Charts;

/// <summary>Colours as 0xRRGGBB.</summary>
internal static class ChartColors
{
    public const uint White = 0xFFFFFF;
    public const uint Black = 0x000000;
    public const uint Grid = 0xE4E4E4;
    public const uint Axis = 0x404040;
    public const uint Blue = 0x1F77B4;
    public const uint Orange = 0xFF7F0E;
    public const uint Green = 0x2CA02C;
    public const uint Red = 0xD62728;
    public const uint Purple = 0x9467BD;
    public const uint Brown = 0x8C564B;
    public const uint Pink = 0xE377C2;
    public const uint Gray = 0x7F7F7F;

    /// <summary>Distinct series colours; pick with <c>Palette[i % Palette.Count]</c>.</summary>
    public static IReadOnlyList<uint> Palette { get; } = [Blue, Orange, Green, Red, Purple, Brown, Pink, Gray];
}
