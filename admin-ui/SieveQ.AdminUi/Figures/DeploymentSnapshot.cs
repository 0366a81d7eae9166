using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Figures;

/// <summary>
/// What one controller Status reply says, reduced to the console's figures. Delivered is the agents' receivers'
/// delivered counters summed. Drops by stage: the pre-SQs' own drops summed, plus the replicas' drops taken from the
/// replica reporting most (every correct replica decides the same drops, so summing them would count each n times).
/// </summary>
public sealed record DeploymentSnapshot(DateTimeOffset Time, IReadOnlyList<ComponentStatus> Components, long Delivered,
    IReadOnlyDictionary<string, long> DropsByStage, IReadOnlyList<ReplicaFigures> Replicas, string AuditHead)
{
    /// <summary>The slowest hosted sender's verdict latency over the last minute, or null when there was no verdict.</summary>
    public VerdictLatency? Latency { get; init; }

    /// <summary>The stages as the design card names them (a-g), keyed by the counter's stage name (SieveStage).</summary>
    public static readonly IReadOnlyList<(string Counter, string Label)> Stages =
    [
        ("Parse", "parse"), ("Whitelist", "(a) whitelist"), ("Sequence", "(b) sequence"), ("Mac", "(c) MAC"), ("Grant", "(d) grant"),
        ("ReplicaAdmission", "(e) replica admission"), ("Rules", "(f) rules"), ("Vote", "(g) vote"),
    ];

    public static DeploymentSnapshot From(ControllerStatusReply reply, DateTimeOffset time)
    {
        ArgumentNullException.ThrowIfNull(reply);
        var delivered = reply.Components.Where(c => c.Component == "agent")
            .Sum(c => c.Counters.Where(kv => kv.Key.StartsWith("receiver.", StringComparison.Ordinal) && kv.Key.EndsWith(".delivered", StringComparison.Ordinal)).Sum(kv => kv.Value));
        var drops = Stages.ToDictionary(s => s.Counter, _ => 0L, StringComparer.Ordinal);
        foreach (var pre in reply.Components.Where(c => c.Component == "pre-sq"))
        {
            AddDrops(drops, pre.Counters);
        }
        var replicas = reply.Components.Where(c => c.Component == "replica-sq").ToList();
        var mostDrops = replicas.OrderByDescending(r => r.Counters.GetValueOrDefault("dropped")).FirstOrDefault();
        if (mostDrops is not null)
        {
            AddDrops(drops, mostDrops.Counters);
        }
        var replicaFigures = ReplicaFigures.From(replicas);
        return new DeploymentSnapshot(time, reply.Components.ToList(), delivered, drops, replicaFigures, reply.AuditLastHash)
        {
            Latency = VerdictLatency.Slowest(reply.Components),
        };
    }

    internal static void AddDrops(Dictionary<string, long> drops, IDictionary<string, long> counters)
    {
        foreach (var (name, value) in counters)
        {
            // drop.{stage}.{reason}
            var parts = name.Split('.');
            if (parts.Length >= 3 && parts[0] == "drop" && drops.ContainsKey(parts[1]))
            {
                drops[parts[1]] += value;
            }
        }
    }
}
