using System.Diagnostics;
using SieveQ.Deployment;

namespace SieveQ.Cli.Bench;

/// <summary>CPU one kind of process used over a measured window, in all and per delivered message.</summary>
/// <param name="Kind">"replica-sq", "pre-sq", "agent", or "bench" (this process: the senders, the receiver and the load).</param>
internal sealed record CpuFigure(string Kind, int Processes, double CpuSeconds, double MicrosPerMessage);

/// <summary>
/// Reads every component's CPU time (user plus system; on Linux from /proc/PID/stat) at the start and
/// the end of the measured window, so `bench e2e` can say what a delivered message costs in CPU and in
/// which process kind, beside its latency. A process that exits within the window is left out: its
/// CPU time cannot be read after it is gone.
/// </summary>
internal sealed class CpuAccount
{
    private const string BenchKind = "bench";
    private readonly ComponentProcesses? _processes;
    private readonly Dictionary<string, TimeSpan> _start;

    private CpuAccount(ComponentProcesses? processes)
    {
        _processes = processes;
        _start = Read();
    }

    /// <summary>Starts the window; without <paramref name="processes"/> only this process is counted.</summary>
    public static CpuAccount Start(ComponentProcesses? processes = null) => new(processes);

    /// <summary>Ends the window: CPU used by each kind of process, largest first.</summary>
    public IReadOnlyList<(string Kind, int Processes, TimeSpan Cpu)> Stop()
    {
        var end = Read();
        return _start.Keys
            .Where(end.ContainsKey)
            .Select(name => (Kind: KindOf(name), Cpu: end[name] - _start[name]))
            .GroupBy(x => x.Kind, StringComparer.Ordinal)
            .Select(g => (g.Key, g.Count(), TimeSpan.FromTicks(g.Sum(x => x.Cpu.Ticks))))
            .OrderByDescending(x => x.Item3)
            .ToList();
    }

    /// <summary>The figures for <paramref name="delivered"/> messages: one per kind, then the total over all kinds.</summary>
    public static IReadOnlyList<CpuFigure> PerMessage(IReadOnlyList<(string Kind, int Processes, TimeSpan Cpu)> used, long delivered)
    {
        var figures = used.Select(u => Figure(u.Kind, u.Processes, u.Cpu, delivered)).ToList();
        figures.Add(Figure("total", used.Sum(u => u.Processes), TimeSpan.FromTicks(used.Sum(u => u.Cpu.Ticks)), delivered));
        return figures;
    }

    /// <summary>"replica-sq-2" is a "replica-sq"; a name without a numeric suffix is its own kind.</summary>
    internal static string KindOf(string name)
    {
        var dash = name.LastIndexOf('-');
        return dash > 0 && dash < name.Length - 1 && name[(dash + 1)..].All(char.IsAsciiDigit) ? name[..dash] : name;
    }

    private static CpuFigure Figure(string kind, int processes, TimeSpan cpu, long delivered) =>
        new(kind, processes, cpu.TotalSeconds, delivered > 0 ? cpu.TotalMicroseconds / delivered : double.NaN);

    private Dictionary<string, TimeSpan> Read()
    {
        using var self = Process.GetCurrentProcess();
        var times = new Dictionary<string, TimeSpan>(StringComparer.Ordinal) { [BenchKind] = self.TotalProcessorTime };
        foreach (var name in _processes?.Names ?? [])
        {
            if (_processes!.Get(name) is { } p && TryCpu(p) is { } cpu)
            {
                times[name] = cpu;
            }
        }

        return times;
    }

    private static TimeSpan? TryCpu(Process p)
    {
        try
        {
            p.Refresh();
            return p.HasExited ? null : p.TotalProcessorTime;
        }
        catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception or NotSupportedException)
        {
            return null;
        }
    }
}
