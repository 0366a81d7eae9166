using System.Globalization;

namespace SieveQ.Cli.Charts;

/// <summary>A linear axis range snapped to "nice" tick steps (1, 2 or 5 times a power of ten).</summary>
internal readonly record struct AxisScale(double Min, double Max, double Step)
{
    /// <summary>Covers [<paramref name="min"/>, <paramref name="max"/>] with at most about <paramref name="maxIntervals"/> tick intervals.</summary>
    public static AxisScale Nice(double min, double max, int maxIntervals)
    {
        maxIntervals = Math.Max(1, maxIntervals);
        if (!double.IsFinite(min) || !double.IsFinite(max))
        {
            (min, max) = (0, 1);
        }

        if (min > max)
        {
            (min, max) = (max, min);
        }

        if (max - min <= Math.Abs(max) * 1e-12)
        {
            var pad = min == 0 ? 1 : Math.Abs(min) * 0.1;
            (min, max) = (min - pad, max + pad);
        }

        var step = NiceCeiling((max - min) / maxIntervals);
        var niceMin = Math.Floor((min / step) + 1e-9) * step;
        var niceMax = Math.Ceiling((max / step) - 1e-9) * step;
        return new AxisScale(niceMin, niceMax, step);
    }

    /// <summary>The tick positions from <see cref="Min"/> to <see cref="Max"/> inclusive.</summary>
    public IReadOnlyList<double> Ticks()
    {
        var count = (int)Math.Round((Max - Min) / Step);
        var ticks = new double[count + 1];
        for (var i = 0; i <= count; i++)
        {
            var value = Math.Round((Min / Step) + i) * Step;
            ticks[i] = Math.Abs(value) < Step * 1e-6 ? 0 : value;
        }

        return ticks;
    }

    /// <summary>Fraction (0..1) of the way from <see cref="Min"/> to <see cref="Max"/>.</summary>
    public double Fraction(double value) => (value - Min) / (Max - Min);

    /// <summary>A short label for a tick value: just enough decimals for the step, K/M/G suffixes for large values.</summary>
    public string Format(double value)
    {
        var magnitude = Math.Max(Math.Abs(Min), Math.Abs(Max));
        var (divisor, suffix) = magnitude switch
        {
            >= 1e9 => (1e9, "G"),
            >= 1e6 => (1e6, "M"),
            >= 1e4 => (1e3, "K"),
            _ => (1.0, ""),
        };
        var exponent = (int)Math.Floor(Math.Log10(Step / divisor) + 1e-9);
        var decimals = Math.Clamp(-exponent, 0, 12);
        var scaled = value / divisor;
        if (Math.Abs(scaled) < Math.Pow(10, -decimals) / 2)
        {
            scaled = 0;
        }

        return scaled.ToString("F" + decimals.ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture) + suffix;
    }

    private static double NiceCeiling(double raw)
    {
        var exponent = Math.Floor(Math.Log10(raw));
        var power = Math.Pow(10, exponent);
        var fraction = raw / power;
        var nice = fraction switch
        {
            <= 1 + 1e-9 => 1,
            <= 2 + 1e-9 => 2,
            <= 5 + 1e-9 => 5,
            _ => 10,
        };
        return nice * power;
    }
}
