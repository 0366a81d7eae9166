using System.Globalization;

namespace SieveQ.Firewall.QGuard;

/// <summary>Busy fraction of the CPU (0..1) since the previous reading.</summary>
public interface ICpuMeter
{
    ValueTask<double> ReadAsync(CancellationToken cancellationToken);
}

/// <summary>
/// The whole machine's CPU from the aggregate line of /proc/stat: busy = all jiffies but idle and
/// iowait. The machine, not the agent, is what overload protection must keep responsive.
/// </summary>
public sealed class ProcStatCpuMeter : ICpuMeter
{
    private readonly string path;
    private ulong lastBusy, lastTotal;
    private double lastFraction;
    private bool primed;

    public ProcStatCpuMeter(string path = "/proc/stat") => this.path = path;

    public static bool IsAvailable => File.Exists("/proc/stat");

    public async ValueTask<double> ReadAsync(CancellationToken cancellationToken)
    {
        string text = await File.ReadAllTextAsync(path, cancellationToken).ConfigureAwait(false);
        var (busy, total) = Parse(text);
        if (primed && total == lastTotal)
        {
            // No tick elapsed since the last read (sampling faster than USER_HZ): nothing new to report.
            return lastFraction;
        }
        double fraction = primed && total > lastTotal
            ? Math.Clamp((double)(busy - Math.Min(busy, lastBusy)) / (total - lastTotal), 0, 1)
            : 0;
        (lastBusy, lastTotal, lastFraction, primed) = (busy, total, fraction, true);
        return fraction;
    }

    /// <summary>Parses "cpu user nice system idle iowait irq softirq steal ..." (the first line).</summary>
    internal static (ulong Busy, ulong Total) Parse(string text)
    {
        int end = text.IndexOf('\n', StringComparison.Ordinal);
        string line = end < 0 ? text : text[..end];
        string[] f = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (f.Length < 5 || f[0] != "cpu")
        {
            throw new FormatException("/proc/stat does not start with an aggregate cpu line");
        }
        ulong total = 0, idle = 0;
        // user nice system idle iowait irq softirq steal; guest time is already inside user.
        for (int i = 1; i < f.Length && i <= 8; i++)
        {
            ulong v = ulong.Parse(f[i], NumberStyles.None, CultureInfo.InvariantCulture);
            total += v;
            if (i is 4 or 5)
            {
                idle += v;
            }
        }
        return (total - idle, total);
    }
}

/// <summary>This process's CPU (Environment.CpuUsage) over all cores, where /proc/stat does not exist.</summary>
public sealed class ProcessCpuMeter : ICpuMeter
{
    private readonly TimeProvider time;
    private TimeSpan lastCpu;
    private long lastStamp;

    public ProcessCpuMeter(TimeProvider? time = null)
    {
        this.time = time ?? TimeProvider.System;
        lastCpu = Environment.CpuUsage.TotalTime;
        lastStamp = this.time.GetTimestamp();
    }

    public ValueTask<double> ReadAsync(CancellationToken cancellationToken)
    {
        TimeSpan cpu = Environment.CpuUsage.TotalTime;
        long now = time.GetTimestamp();
        TimeSpan wall = time.GetElapsedTime(lastStamp, now);
        double fraction = wall <= TimeSpan.Zero ? 0 : (cpu - lastCpu) / (wall * Environment.ProcessorCount);
        (lastCpu, lastStamp) = (cpu, now);
        return ValueTask.FromResult(Math.Clamp(fraction, 0, 1));
    }
}
