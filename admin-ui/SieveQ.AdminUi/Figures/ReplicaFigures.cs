using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Figures;

/// <summary>
/// One replica-SQ's line on the replicas page: its ordering figures (`regency`, `last_decided`, `checkpoint`, `decided`)
/// and its lag, the decided instances it is behind the most advanced replica that answered. A replica that did not
/// answer has no lag (its figures are unknown; it shows as DOWN).
/// </summary>
public sealed record ReplicaFigures(string Name, bool Reachable, bool Healthy, string Detail, long Regency, long Leader, long LastDecided, long Checkpoint,
    long Decided, long QuarantinedSenders, long? Lag)
{
    /// <summary>
    /// Lag beyond which a replica is flagged: one checkpoint interval (the replicas' default, 64 instances). A replica
    /// that far behind catches up by state transfer from a checkpoint rather than by the ordering it missed.
    /// </summary>
    public const long LagBound = 64;

    public bool Lagging => Lag > LagBound;

    public static IReadOnlyList<ReplicaFigures> From(IReadOnlyList<ComponentStatus> replicas)
    {
        ArgumentNullException.ThrowIfNull(replicas);
        var n = Math.Max(1, replicas.Count);
        var answered = replicas.Where(r => r.Reachable).ToList();
        var head = answered.Count == 0 ? 0 : answered.Max(r => r.Counters.GetValueOrDefault("last_decided"));
        return replicas.Select(r =>
        {
            var regency = r.Counters.GetValueOrDefault("regency");
            var lastDecided = r.Counters.GetValueOrDefault("last_decided");
            return new ReplicaFigures(r.Name, r.Reachable, r.Healthy, r.Detail, regency, regency % n, lastDecided, r.Counters.GetValueOrDefault("checkpoint"),
                r.Counters.GetValueOrDefault("decided"), r.Counters.GetValueOrDefault("quarantined.senders"), r.Reachable ? head - lastDecided : null);
        }).ToList();
    }
}
