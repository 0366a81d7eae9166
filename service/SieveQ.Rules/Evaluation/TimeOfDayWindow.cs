using SieveQ.Rules.Document;

namespace SieveQ.Rules.Evaluation;

/// <summary>
/// Named spans of the UTC week, tested against agreed time. A span that ends before it starts runs
/// past midnight and belongs to the day it starts on (Friday 22:00 to 02:00 covers Saturday 01:00).
/// </summary>
internal sealed class TimeOfDayWindow(string name, IReadOnlyList<SpanSpec> spans)
{
    private const long DayMs = 86_400_000;

    private readonly SpanSpec[] _spans = [.. spans];

    public string Name { get; } = name;

    public bool Contains(long agreedMs)
    {
        var day = Math.DivRem(agreedMs, DayMs, out var inDay);
        if (inDay < 0)
        {
            day--;
            inDay += DayMs;
        }
        var minute = (int)(inDay / 60_000);
        // 1970-01-01 was a Thursday; Monday is day 0 of the week here.
        var weekday = (int)(((day + 3) % 7 + 7) % 7);
        var yesterday = (weekday + 6) % 7;
        foreach (var s in _spans)
        {
            if (s.FromMinute < s.ToMinute)
            {
                if ((s.Days & (1 << weekday)) != 0 && minute >= s.FromMinute && minute < s.ToMinute)
                {
                    return true;
                }
            }
            else if (((s.Days & (1 << weekday)) != 0 && minute >= s.FromMinute) || ((s.Days & (1 << yesterday)) != 0 && minute < s.ToMinute))
            {
                return true;
            }
        }
        return false;
    }
}
