using System.Diagnostics;

namespace SieveQ.Cli.Bench;

/// <summary>
/// A process's CPU time so far: on Linux straight from /proc/PID/stat (utime + stime, in sysconf(_SC_CLK_TCK)
/// ticks), one read per process and no Process refresh; elsewhere what <see cref="Process.TotalProcessorTime"/>
/// says. Null for a process that is gone.
/// </summary>
internal static class ProcessCpuClock
{
    private static readonly bool HasProc = File.Exists("/proc/self/stat");

    public static CpuReading? Self()
    {
        using var self = Process.GetCurrentProcess();
        return Read(self);
    }

    public static CpuReading? Read(Process p)
    {
        try
        {
            var pid = p.Id;
            if (HasProc)
            {
                return FromProc(pid) is { } cpu ? new CpuReading(pid, cpu) : null;
            }
            p.Refresh();
            return p.HasExited ? null : new CpuReading(pid, p.TotalProcessorTime);
        }
        catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception or NotSupportedException)
        {
            return null;
        }
    }

    /// <summary>The CPU time in /proc/PID/stat, or null when the process is gone or the line is not a stat line.</summary>
    internal static TimeSpan? FromProc(int pid)
    {
        string line;
        try
        {
            line = File.ReadAllText($"/proc/{pid}/stat");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        return ProcStat.CpuTicks(line.TrimEnd('\n')) is { } ticks ? ProcStat.ToTime(ticks, ClockTicks.PerSecond) : null;
    }
}
