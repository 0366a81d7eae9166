using System.Globalization;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Sieve.Hosting.Diagnostics;

namespace SieveQ.Cli.Bench;

/// <summary>`bench e2e --trace`: the stage profile of one SieveQ run, from the marks every process wrote.</summary>
internal static class E2eStageReport
{
    /// <summary>Marks of messages numbered between <paramref name="from"/> and <paramref name="to"/> (Stopwatch ticks), profiled.</summary>
    public static IReadOnlyList<StageFigure> Read(int f, long from, long to)
    {
        var folder = Environment.GetEnvironmentVariable(StageTrace.FolderVariable);
        if (string.IsNullOrEmpty(folder) || !Directory.Exists(folder))
        {
            return [];
        }
        var marks = StageTrace.ReadFolder(folder);
        // Sequence numbers restart in every run (fresh sender state), so a message is this run's only if it was numbered in its window.
        var inRun = marks.Where(m => m.Stage == StageNames.SenderNumbered && m.Ticks >= from && m.Ticks <= to)
            .Select(m => (m.Sender, m.Seq)).ToHashSet();
        var own = marks.Where(m => m.Ticks >= from && inRun.Contains((m.Sender, m.Seq))).ToList();
        return StageProfile.Compute(own, f);
    }

    public static void Print(E2eFigures figures)
    {
        if (figures.Profile is not { Count: > 0 } profile)
        {
            return;
        }
        Console.WriteLine($"profile of '{figures.Name}' ({profile[0].Samples} sampled messages; ms since the sender numbered the message):");
        Console.WriteLine($"  {"stage",-32} {"first p50",10} {"first p90",10} {"f+1-th p50",11} {"step p50",9}");
        var previous = 0.0;
        foreach (var s in profile)
        {
            var quorum = s.QuorumP50Ms is { } q ? q.ToString("0.00", CultureInfo.InvariantCulture) : "";
            var reached = s.QuorumP50Ms ?? s.FirstP50Ms;
            Console.WriteLine($"  {s.Stage,-32} {s.FirstP50Ms,10:0.00} {s.FirstP90Ms,10:0.00} {quorum,11} {reached - previous,9:0.00}");
            previous = reached;
        }
    }
}
