using System.Globalization;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Figures;

/// <summary>
/// One hosted sender's verdict latency as its agent reports it (`sender.N.verdict_latency_*`: numbered to f+1 replicas'
/// verdict, over the last minute or so). The overview shows the slowest sender's, by p99, as `sieveq status` does.
/// </summary>
public sealed record VerdictLatency(int Sender, long Samples, long P50Us, long P99Us)
{
    private const string Prefix = "sender.";
    private const string SamplesSuffix = ".verdict_latency_samples";

    /// <summary>The slowest sender over every reachable agent, or null when no agent saw a verdict in the window.</summary>
    public static VerdictLatency? Slowest(IEnumerable<ComponentStatus> components)
    {
        ArgumentNullException.ThrowIfNull(components);
        return components.Where(c => c.Component == "agent" && c.Reachable).SelectMany(c => Of(c.Counters)).OrderByDescending(l => l.P99Us).FirstOrDefault();
    }

    /// <summary>Each sender with at least one sample in the window.</summary>
    public static IEnumerable<VerdictLatency> Of(IReadOnlyDictionary<string, long> counters)
    {
        ArgumentNullException.ThrowIfNull(counters);
        foreach (var (key, samples) in counters)
        {
            if (samples > 0 && key.StartsWith(Prefix, StringComparison.Ordinal) && key.EndsWith(SamplesSuffix, StringComparison.Ordinal)
                && int.TryParse(key[Prefix.Length..^SamplesSuffix.Length], NumberStyles.None, CultureInfo.InvariantCulture, out var sender))
            {
                yield return new VerdictLatency(sender, samples, counters.GetValueOrDefault($"sender.{sender}.verdict_latency_p50_us"),
                    counters.GetValueOrDefault($"sender.{sender}.verdict_latency_p99_us"));
            }
        }
    }

    public static string Milliseconds(long us) => (us / 1000.0).ToString("0.0", CultureInfo.InvariantCulture) + " ms";
}
