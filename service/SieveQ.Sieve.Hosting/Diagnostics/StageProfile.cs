using System.Diagnostics;
using SieveQ.Sieve.Diagnostics;

namespace SieveQ.Sieve.Hosting.Diagnostics;

/// <summary>One stage of a <see cref="StageProfile"/>: milliseconds since the message was numbered, over the sampled messages.</summary>
public sealed record StageFigure(string Stage, int Samples, double FirstP50Ms, double FirstP90Ms, double? QuorumP50Ms);

/// <summary>
/// Where the time goes: from the marks of a <see cref="StageTrace"/> folder, for each stage the median
/// and 90th percentile time since the message was numbered, taking the first process that reached it
/// and, where several replicas pass the stage, the (f+1)-th (what the receiver must wait for).
/// </summary>
public static class StageProfile
{
    public static IReadOnlyList<StageFigure> Compute(IReadOnlyList<StageTrace.TraceMark> marks, int f)
    {
        ArgumentNullException.ThrowIfNull(marks);
        var byMessage = marks.GroupBy(m => (m.Sender, m.Seq));
        var firsts = new Dictionary<string, List<double>>();
        var quorums = new Dictionary<string, List<double>>();
        foreach (var message in byMessage)
        {
            var start = message.Where(m => m.Stage == StageNames.SenderNumbered).Select(m => (long?)m.Ticks).Min();
            if (start is not { } t0)
            {
                continue;
            }
            foreach (var stage in message.GroupBy(m => m.Stage))
            {
                // One mark per process: a stage a process passes twice (a retransmission) counts its first pass.
                var perProcess = stage.GroupBy(m => m.Process).Select(p => p.Min(m => m.Ticks)).Order().ToList();
                Add(firsts, stage.Key, Ms(perProcess[0] - t0));
                if (perProcess.Count > f)
                {
                    Add(quorums, stage.Key, Ms(perProcess[f] - t0));
                }
            }
        }
        var figures = new List<StageFigure>();
        foreach (var stage in StageNames.InPathOrder)
        {
            if (!firsts.TryGetValue(stage, out var first))
            {
                continue;
            }
            first.Sort();
            double? quorum = null;
            if (quorums.TryGetValue(stage, out var q) && q.Count * 2 >= first.Count)
            {
                q.Sort();
                quorum = Percentile(q, 0.5);
            }
            figures.Add(new StageFigure(stage, first.Count, Percentile(first, 0.5), Percentile(first, 0.9), quorum));
        }
        return figures;
    }

    private static void Add(Dictionary<string, List<double>> d, string key, double value)
    {
        if (!d.TryGetValue(key, out var list))
        {
            d[key] = list = [];
        }
        list.Add(value);
    }

    private static double Ms(long ticks) => ticks * 1000.0 / Stopwatch.Frequency;

    private static double Percentile(List<double> sorted, double p) => sorted[Math.Min(sorted.Count - 1, (int)(p * sorted.Count))];
}
