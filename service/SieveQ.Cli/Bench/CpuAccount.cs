using SieveQ.Deployment;

namespace SieveQ.Cli.Bench;

/// <summary>CPU one kind of process used over a measured window, in all and per delivered message.</summary>
/// <param name="Kind">"replica-sq", "pre-sq", "agent", or "bench" (this process: the senders, the receiver and the load).</param>
internal sealed record CpuFigure(string Kind, int Processes, double CpuSeconds, double MicrosPerMessage);

/// <summary>One process's CPU time (user plus system) since it started, as read at one moment.</summary>
internal readonly record struct CpuReading(int Pid, TimeSpan Cpu);

/// <summary>
/// Reads every component's CPU time at the start and the end of the measured window (<see cref="ProcessCpuClock"/>:
/// /proc/PID/stat on Linux), so `bench e2e` can say what a delivered message costs in CPU and in which process
/// kind, beside its latency. A process that exits within the window, or is replaced by another under the same
/// name, is left out: the CPU its first incarnation used after the start cannot be read.
/// </summary>
internal sealed class CpuAccount
{
    /// <summary>This process: the load generator, the in-process senders and the receiver.</summary>
    public const string BenchKind = "bench";

    private readonly Func<IReadOnlyDictionary<string, CpuReading>> _read;
    private readonly IReadOnlyDictionary<string, CpuReading> _start;

    internal CpuAccount(Func<IReadOnlyDictionary<string, CpuReading>> read)
    {
        _read = read;
        _start = read();
    }

    /// <summary>Starts the window; without <paramref name="processes"/> only this process is counted.</summary>
    public static CpuAccount Start(ComponentProcesses? processes = null) => new(() => ReadAll(processes));

    /// <summary>Ends the window: CPU used by each kind of process, largest first.</summary>
    public IReadOnlyList<(string Kind, int Processes, TimeSpan Cpu)> Stop() => Used(_start, _read());

    /// <summary>
    /// CPU used between two readings, by kind: only processes read both times under the same name and process id
    /// count (a restarted component's new process id says its CPU counter started again).
    /// </summary>
    internal static IReadOnlyList<(string Kind, int Processes, TimeSpan Cpu)> Used(
        IReadOnlyDictionary<string, CpuReading> start, IReadOnlyDictionary<string, CpuReading> end) =>
        start
            .Where(s => end.TryGetValue(s.Key, out var e) && e.Pid == s.Value.Pid && e.Cpu >= s.Value.Cpu)
            .Select(s => (Kind: KindOf(s.Key), Cpu: end[s.Key].Cpu - s.Value.Cpu))
            .GroupBy(x => x.Kind, StringComparer.Ordinal)
            .Select(g => (g.Key, g.Count(), TimeSpan.FromTicks(g.Sum(x => x.Cpu.Ticks))))
            .OrderByDescending(x => x.Item3)
            .ThenBy(x => x.Key, StringComparer.Ordinal)
            .ToList();

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

    private static Dictionary<string, CpuReading> ReadAll(ComponentProcesses? processes)
    {
        var times = new Dictionary<string, CpuReading>(StringComparer.Ordinal);
        if (ProcessCpuClock.Self() is { } self)
        {
            times[BenchKind] = self;
        }
        foreach (var name in processes?.Names ?? [])
        {
            if (processes!.Get(name) is { } p && ProcessCpuClock.Read(p) is { } cpu)
            {
                times[name] = cpu;
            }
        }

        return times;
    }
}
