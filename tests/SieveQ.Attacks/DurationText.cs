using System.Globalization;

namespace SieveQ.Attacks;

/// <summary>Durations as the benchmarks take them: <c>500ms</c>, <c>20s</c>, <c>2m</c>.</summary>
internal static class DurationText
{
    public static TimeSpan Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var (number, unit) = text.EndsWith("ms", StringComparison.Ordinal) ? (text[..^2], 0.001)
            : text.EndsWith('s') ? (text[..^1], 1.0)
            : text.EndsWith('m') ? (text[..^1], 60.0)
            : (text, double.NaN);
        if (double.IsNaN(unit) || !double.TryParse(number, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var value) || value > 86_400)
        {
            throw new FormatException($"'{text}' is not a duration such as 500ms, 20s or 2m");
        }
        return TimeSpan.FromSeconds(value * unit);
    }
}
