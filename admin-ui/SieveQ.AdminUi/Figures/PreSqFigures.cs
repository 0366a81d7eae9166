using SieveQ.Deployment;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Figures;

/// <summary>
/// One pre-SQ's line on the pre-SQs page. Health, drops and admissions are the pre-SQ's own report. Whether it is
/// quarantined and how suspect it is are the replicas' view, which is what the sieve acts on: quarantined when f+1
/// replicas say so (at least one of them correct), and the suspicion that f+1 replicas report at least.
/// </summary>
public sealed record PreSqFigures(int Id, string Name, ComponentStatus? Status, int QuarantinedBy, int Reporting, int F, long Suspicion,
    IReadOnlyDictionary<string, long> DropsByStage, long? Admitted, double? AdmittedPerSecond)
{
    /// <summary>The replicas' verdict in words: quarantined, admitted, or split (and how) while they disagree or are not all reporting.</summary>
    public string Quarantine =>
        Reporting == 0 ? "unknown (no replica reports)"
        : QuarantinedBy >= F + 1 ? $"quarantined ({QuarantinedBy} of {Reporting} replicas)"
        : QuarantinedBy == 0 ? "admitted"
        : $"split: {QuarantinedBy} of {Reporting} replicas say quarantined, {F + 1} needed";

    public bool IsQuarantined => QuarantinedBy >= F + 1;

    public static IReadOnlyList<PreSqFigures> From(DeploymentConfig deployment, DeploymentSnapshot latest, DeploymentSnapshot? previous)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        ArgumentNullException.ThrowIfNull(latest);
        var replicas = latest.Components.Where(c => c.Component == "replica-sq" && c.Reachable).ToList();
        return deployment.PreSqs.OrderBy(p => p.Id).Select(p =>
        {
            var status = Find(latest, p.Name);
            var quarantineKey = $"quarantined.pre_sq.{p.Id}";
            var reporting = replicas.Where(r => r.Counters.ContainsKey(quarantineKey)).ToList();
            var suspicions = replicas.Select(r => r.Counters.TryGetValue($"suspicion.pre_sq.{p.Id}", out var v) ? v : (long?)null)
                .OfType<long>().OrderDescending().ToList();
            var drops = DeploymentSnapshot.Stages.ToDictionary(s => s.Counter, _ => 0L, StringComparer.Ordinal);
            if (status is not null)
            {
                DeploymentSnapshot.AddDrops(drops, status.Counters);
            }
            var admitted = status is not null && status.Counters.TryGetValue("passed", out var passed) ? passed : (long?)null;
            double? rate = null;
            if (admitted is { } now && previous is not null && Find(previous, p.Name) is { } before && before.Counters.TryGetValue("passed", out var then)
                && latest.Time > previous.Time)
            {
                // A restarted pre-SQ counts from zero again: no negative rate.
                rate = Math.Max(0, now - then) / (latest.Time - previous.Time).TotalSeconds;
            }
            return new PreSqFigures(p.Id, p.Name, status, reporting.Count(r => r.Counters[quarantineKey] != 0), reporting.Count, deployment.F,
                suspicions.Count > deployment.F ? suspicions[deployment.F] : 0, drops, admitted, rate);
        }).ToList();
    }

    private static ComponentStatus? Find(DeploymentSnapshot snapshot, string name) =>
        snapshot.Components.FirstOrDefault(c => c.Component == "pre-sq" && c.Name == name);
}
