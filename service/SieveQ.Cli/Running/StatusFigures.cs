using System.Globalization;
using SieveQ.Deployment;

namespace SieveQ.Cli.Running;

/// <summary>
/// What `sieveq status` says besides healthy or not: from two health probes a second apart, each component's figures
/// (rates, regency, queues, drops) and the sieve's in one place: delivered msg/s, drops by stage (a)-(g), quarantines,
/// the pre-SQ assignment, regency and leader. Agreed figures are read as f+1 replica-SQs give them at least, so one lying replica moves nothing.
/// </summary>
internal static class StatusFigures
{
    /// <summary>Stages (a)-(d) are counted by the pre-SQs, (e)-(f) by the replica-SQs (agreed), (g) by the receivers.</summary>
    private static readonly (string Stage, string Letter)[] Stages =
    [
        ("Whitelist", "a"), ("Sequence", "b"), ("Mac", "c"), ("Grant", "d"), ("ReplicaAdmission", "e"), ("Rules", "f"), ("Vote", "g"),
    ];

    /// <summary>One figures line for a component, or null when it was not reachable.</summary>
    public static string? Of(ComponentHealth now, ComponentHealth? before, double seconds)
    {
        ArgumentNullException.ThrowIfNull(now);
        if (!now.Reachable)
        {
            return null;
        }
        var c = now.Counters;
        return now.Component switch
        {
            "replica-sq" => Invariant($"regency {Get(c, "regency")}, last decided {Get(c, "last_decided")}, checkpoint {Get(c, "checkpoint")}, processed {Get(c, "processed")} ({Rate(now, before, "processed", seconds)} msg/s), held {Get(c, "held")}, queued {Sum(c, "queue.")} msgs / {Bytes(Sum(c, "queue_bytes."))}, dropped {Get(c, "dropped")}"),
            "pre-sq" => Invariant($"passed {Get(c, "passed")} ({Rate(now, before, "passed", seconds)} msg/s), dropped {Get(c, "dropped")} ({Rate(now, before, "dropped", seconds)}/s), ordering in flight {Get(c, "ordering_in_flight")}"),
            "agent" => Invariant($"delivered to receivers {Sum(c, "receiver.", ".delivered")} ({RateOfSum(now, before, "receiver.", ".delivered", seconds)} msg/s), senders' messages delivered {Sum(c, "sender.", ".delivered")}, rejected {Sum(c, "sender.", ".rejected")}, timed out {Sum(c, "sender.", ".timed_out")}{AgentLatency(c)}"),
            _ => null,
        };
    }

    /// <summary>The sieve as a whole.</summary>
    public static IReadOnlyList<string> Sieve(IReadOnlyList<ComponentHealth> now, IReadOnlyList<ComponentHealth> before, double seconds, int f)
    {
        ArgumentNullException.ThrowIfNull(now);
        ArgumentNullException.ThrowIfNull(before);
        var replicas = now.Where(h => h.Component == "replica-sq" && h.Reachable).ToList();
        var preSqs = now.Where(h => h.Component == "pre-sq" && h.Reachable).ToList();
        var lines = new List<string>();
        if (replicas.Count >= f + 1)
        {
            var regency = Agreed(replicas.Select(r => Get(r.Counters, "regency")), f);
            var n = now.Count(h => h.Component == "replica-sq");
            var rates = replicas.Select(r => RateValue(r, Find(before, r), "processed", seconds)).ToList();
            lines.Add(Invariant($"ordering: regency {regency} (leader replica-sq-{(n == 0 ? 0 : regency % n)}), last decided {Agreed(replicas.Select(r => Get(r.Counters, "last_decided")), f)}, checkpoint {Agreed(replicas.Select(r => Get(r.Counters, "checkpoint")), f)}; sieve processing {Agreed(rates.Select(r => (long)Math.Round(r)), f)} msg/s"));
            var quarantinedSenders = Agreed(replicas.Select(r => Get(r.Counters, "quarantined.senders")), f);
            var quarantinedPreSqs = replicas[0].Counters.Keys.Where(k => k.StartsWith("quarantined.pre_sq.", StringComparison.Ordinal))
                .Where(k => Agreed(replicas.Select(r => Get(r.Counters, k)), f) > 0)
                .Select(k => "pre-sq-" + k["quarantined.pre_sq.".Length..]).ToList();
            lines.Add(Invariant($"quarantined: {quarantinedSenders} sender(s), pre-SQs: {(quarantinedPreSqs.Count == 0 ? "none" : string.Join(", ", quarantinedPreSqs))}"));
            lines.Add(StatusAssignment.Line(replicas, f));
        }
        else
        {
            lines.Add(Invariant($"ordering: {replicas.Count} replica-SQ(s) answered, {f + 1} needed to say anything agreed"));
        }
        var delivered = now.Where(h => h.Component == "agent" && h.Reachable)
            .Sum(a => RateOfSumValue(a, Find(before, a), "receiver.", ".delivered", seconds));
        lines.Add(Invariant($"delivered to the agents' receivers: {delivered:0} msg/s"));
        var slowest = now.Where(h => h.Component == "agent" && h.Reachable).SelectMany(a => SenderLatencies(a.Counters)).OrderByDescending(l => l.P99Us).FirstOrDefault();
        lines.Add(slowest.Samples == 0
            ? "verdict latency (numbered to f+1 replicas' verdict, the last ~1 min): no verdicts"
            : Invariant($"verdict latency (numbered to f+1 replicas' verdict, the last ~1 min, slowest sender {slowest.Sender}): p50 {Ms(slowest.P50Us)}, p99 {Ms(slowest.P99Us)} over {slowest.Samples} messages"));
        var drops = Stages.Select(s =>
        {
            var prefix = $"drop.{s.Stage}.";
            var count = s.Letter is "a" or "b" or "c" or "d"
                ? preSqs.Sum(p => Sum(p.Counters, prefix))
                : replicas.Count >= f + 1 ? Agreed(replicas.Select(r => Sum(r.Counters, prefix)), f) : 0;
            return Invariant($"({s.Letter}) {s.Stage} {count}");
        });
        lines.Add("drops by stage: " + string.Join(", ", drops));
        return lines;
    }

    /// <summary>The value at least f+1 of the replicas reached: the (f+1)-th highest.</summary>
    internal static long Agreed(IEnumerable<long> values, int f)
    {
        var sorted = values.OrderDescending().ToList();
        return sorted.Count == 0 ? 0 : sorted[Math.Min(f, sorted.Count - 1)];
    }

    /// <summary>Each hosted sender's verdict latency window, from the agent's counters.</summary>
    internal static IEnumerable<(int Sender, long Samples, long P50Us, long P99Us)> SenderLatencies(IReadOnlyDictionary<string, long> c)
    {
        const string suffix = ".verdict_latency_samples";
        foreach (var key in c.Keys.Where(k => k.StartsWith("sender.", StringComparison.Ordinal) && k.EndsWith(suffix, StringComparison.Ordinal)))
        {
            var id = key["sender.".Length..^suffix.Length];
            if (c[key] > 0 && int.TryParse(id, NumberStyles.None, CultureInfo.InvariantCulture, out var sender))
            {
                yield return (sender, c[key], Get(c, $"sender.{id}.verdict_latency_p50_us"), Get(c, $"sender.{id}.verdict_latency_p99_us"));
            }
        }
    }

    private static string AgentLatency(IReadOnlyDictionary<string, long> c) =>
        SenderLatencies(c).OrderByDescending(l => l.P99Us).FirstOrDefault() is { Samples: > 0 } l
            ? Invariant($", verdict latency p50 {Ms(l.P50Us)} / p99 {Ms(l.P99Us)} (sender {l.Sender}, slowest)")
            : "";

    private static string Ms(long us) => Invariant($"{us / 1000.0:0.0} ms");

    private static ComponentHealth? Find(IReadOnlyList<ComponentHealth> probes, ComponentHealth h) =>
        probes.FirstOrDefault(p => p.Component == h.Component && p.Name == h.Name && p.Reachable);

    private static long Get(IReadOnlyDictionary<string, long> c, string key) => c.TryGetValue(key, out var v) ? v : 0;

    private static long Sum(IReadOnlyDictionary<string, long> c, string prefix, string suffix = "") =>
        c.Where(kv => kv.Key.StartsWith(prefix, StringComparison.Ordinal) && kv.Key.EndsWith(suffix, StringComparison.Ordinal)).Sum(kv => kv.Value);

    private static double RateValue(ComponentHealth now, ComponentHealth? before, string key, double seconds) =>
        before is null || seconds <= 0 ? 0 : Math.Max(0, Get(now.Counters, key) - Get(before.Counters, key)) / seconds;

    private static double RateOfSumValue(ComponentHealth now, ComponentHealth? before, string prefix, string suffix, double seconds) =>
        before is null || seconds <= 0 ? 0 : Math.Max(0, Sum(now.Counters, prefix, suffix) - Sum(before.Counters, prefix, suffix)) / seconds;

    private static string Rate(ComponentHealth now, ComponentHealth? before, string key, double seconds) =>
        before is null ? "-" : RateValue(now, before, key, seconds).ToString("0", CultureInfo.InvariantCulture);

    private static string RateOfSum(ComponentHealth now, ComponentHealth? before, string prefix, string suffix, double seconds) =>
        before is null ? "-" : RateOfSumValue(now, before, prefix, suffix, seconds).ToString("0", CultureInfo.InvariantCulture);

    private static string Bytes(long b) => b switch
    {
        < 10 * 1024 => Invariant($"{b} B"),
        < 10 * 1024 * 1024 => Invariant($"{b / 1024} KiB"),
        _ => Invariant($"{b / (1024 * 1024)} MiB"),
    };

    private static string Invariant(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);
}
