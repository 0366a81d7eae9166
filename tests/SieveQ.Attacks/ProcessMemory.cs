using System.Diagnostics;
using System.Globalization;

namespace SieveQ.Attacks;

/// <summary>A component process's resident memory, from /proc (Linux); null elsewhere or once the process is gone.</summary>
internal static class ProcessMemory
{
    public static double? RssMiB(Process process)
    {
        try
        {
            foreach (var line in File.ReadLines($"/proc/{process.Id}/status"))
            {
                // "VmRSS:    123456 kB"
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal)
                    && long.TryParse(line["VmRSS:".Length..].Trim().Split(' ')[0], NumberStyles.None, CultureInfo.InvariantCulture, out var kb))
                {
                    return kb / 1024.0;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidOperationException)
        {
            // not Linux, or the process exited
        }
        return null;
    }
}
