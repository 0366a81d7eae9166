using System.Globalization;

namespace SieveQ.Cli.Bench;

/// <summary>The machine's 1-minute load average (/proc/loadavg), printed beside figures taken on a shared machine.</summary>
internal static class LoadAverage
{
    /// <summary>The first field of /proc/loadavg, or null where there is none.</summary>
    public static double? OneMinute()
    {
        try
        {
            var first = File.ReadAllText("/proc/loadavg").Split(' ', 2)[0];
            return double.TryParse(first, NumberStyles.Float, CultureInfo.InvariantCulture, out var load) ? load : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
