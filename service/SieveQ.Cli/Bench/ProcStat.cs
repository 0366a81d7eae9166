using System.Globalization;

namespace SieveQ.Cli.Bench;

/// <summary>
/// The CPU time (user plus system) in one line of Linux's <c>/proc/PID/stat</c>. The second field is the
/// program name in parentheses, and that name may itself hold spaces and parentheses ("(a) b)"), so the
/// fields are counted from the last ')' of the line, never by splitting the whole line.
/// </summary>
internal static class ProcStat
{
    // Fields 14 (utime) and 15 (stime), counted from 1; after the name, field 3 (the state) comes first.
    private const int UtimeAfterName = 14 - 3;

    /// <summary>utime + stime in clock ticks, or null when the line is not a stat line.</summary>
    public static long? CpuTicks(string line)
    {
        var open = line.IndexOf(" (", StringComparison.Ordinal);
        var close = line.LastIndexOf(')');
        if (open <= 0 || close < open || !long.TryParse(line.AsSpan(0, open), NumberStyles.None, CultureInfo.InvariantCulture, out _))
        {
            return null;
        }

        var fields = line[(close + 1)..].Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (fields.Length <= UtimeAfterName + 1
            || !long.TryParse(fields[UtimeAfterName], NumberStyles.None, CultureInfo.InvariantCulture, out var utime)
            || !long.TryParse(fields[UtimeAfterName + 1], NumberStyles.None, CultureInfo.InvariantCulture, out var stime))
        {
            return null;
        }

        return utime + stime;
    }

    /// <summary>Ticks as time, at <paramref name="ticksPerSecond"/> (sysconf(_SC_CLK_TCK), 100 on Linux).</summary>
    public static TimeSpan ToTime(long ticks, long ticksPerSecond) =>
        TimeSpan.FromTicks(checked(ticks * (TimeSpan.TicksPerSecond / ticksPerSecond)));
}
