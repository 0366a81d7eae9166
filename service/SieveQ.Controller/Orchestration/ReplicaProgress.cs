using System.Globalization;
using SieveQ.Deployment;

namespace SieveQ.Controller.Orchestration;

/// <summary>
/// One replica-SQ as its health call shows it: healthy or why not, how far it has decided, its regency, and how many
/// of its outbound ordering links are up (each replica dials every other, so a restarted replica is heard by a peer
/// only once that peer's own link to it is back, after the peer's reconnect back-off).
/// </summary>
public readonly record struct ReplicaProgress(int Replica, bool Healthy, long LastDecided, long Regency, string Detail, int ConnectedReplicas = 0)
{
    public override string ToString() => Healthy
        ? $"{LocalDeploymentLauncher.ReplicaName(Replica)}: decided up to {LastDecided.ToString(CultureInfo.InvariantCulture)}"
        : $"{LocalDeploymentLauncher.ReplicaName(Replica)}: {Detail}";
}

/// <summary>Where a recovery reads the replicas' progress from; over their health calls in a deployment (<see cref="DeploymentReplicaProgress"/>).</summary>
public interface IReplicaProgressSource
{
    /// <summary>The replica ids, 0 to 3f.</summary>
    IReadOnlyList<int> Replicas { get; }

    /// <summary>The faults the replicas tolerate.</summary>
    int F { get; }

    /// <summary>One reading; an unreachable replica is unhealthy with the reason in <see cref="ReplicaProgress.Detail"/>, never an exception.</summary>
    Task<ReplicaProgress> ReadAsync(int replica, CancellationToken ct);
}

/// <summary>The replicas of a deployment, read through the same pinned health call as `sieveq status`.</summary>
public sealed class DeploymentReplicaProgress(DeploymentConfig deployment) : IReplicaProgressSource
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(2);

    public IReadOnlyList<int> Replicas { get; } = [.. deployment.Replicas.Select(r => r.Id).Order()];

    public int F => deployment.F;

    public async Task<ReplicaProgress> ReadAsync(int replica, CancellationToken ct)
    {
        var r = deployment.Replica(replica);
        var h = await DeploymentHealth.ProbeAsync("replica-sq", r.Name, r.ApiUrl, Protocol.ProtocolNames.ReplicaSqService, Timeout, ct, r.Pin()).ConfigureAwait(false);
        return new ReplicaProgress(replica, h.Healthy, h.Counters.GetValueOrDefault("last_decided", -1), h.Counters.GetValueOrDefault("regency", -1), h.Detail,
            (int)h.Counters.GetValueOrDefault("connected_replicas", 0));
    }
}
