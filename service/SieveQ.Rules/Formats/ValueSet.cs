using SieveQ.Rules.Document;

namespace SieveQ.Rules.Formats;

/// <summary>
/// The integers a field may hold: within [min, max] when given, and in one of the listed values or
/// ranges when any are listed. Sorted, merged intervals and a binary search, so the check costs
/// O(log n) however long the list.
/// </summary>
internal sealed class ValueSet
{
    private readonly long _min;
    private readonly long _max;
    private readonly long[] _lows;
    private readonly long[] _highs;

    private ValueSet(long min, long max, long[] lows, long[] highs)
    {
        _min = min;
        _max = max;
        _lows = lows;
        _highs = highs;
    }

    public static readonly ValueSet Any = new(long.MinValue, long.MaxValue, [], []);

    public static ValueSet From(ValueConstraint c)
    {
        var min = c.Min is { } lo ? CeilingToLong(lo) : long.MinValue;
        var max = c.Max is { } hi ? FloorToLong(hi) : long.MaxValue;
        var intervals = new List<(long Low, long High)>();
        foreach (var v in c.Values ?? [])
        {
            intervals.Add((v, v));
        }
        foreach (var r in c.Ranges ?? [])
        {
            intervals.Add((Math.Min(r.Low, r.High), Math.Max(r.Low, r.High)));
        }
        intervals.Sort((a, b) => a.Low != b.Low ? a.Low.CompareTo(b.Low) : a.High.CompareTo(b.High));
        var lows = new List<long>();
        var highs = new List<long>();
        foreach (var (l, h) in intervals)
        {
            if (highs.Count > 0 && l <= highs[^1] + 1 && highs[^1] != long.MaxValue)
            {
                highs[^1] = Math.Max(highs[^1], h);
            }
            else
            {
                lows.Add(l);
                highs.Add(h);
            }
        }
        return new ValueSet(min, max, [.. lows], [.. highs]);
    }

    public bool Contains(long v)
    {
        if (v < _min || v > _max)
        {
            return false;
        }
        if (_lows.Length == 0)
        {
            return true;
        }
        var i = Array.BinarySearch(_lows, v);
        if (i >= 0)
        {
            return true;
        }
        i = ~i - 1;
        return i >= 0 && v <= _highs[i];
    }

    private static long CeilingToLong(double d) => d <= long.MinValue ? long.MinValue : d >= long.MaxValue ? long.MaxValue : (long)Math.Ceiling(d);

    private static long FloorToLong(double d) => d <= long.MinValue ? long.MinValue : d >= long.MaxValue ? long.MaxValue : (long)Math.Floor(d);
}
