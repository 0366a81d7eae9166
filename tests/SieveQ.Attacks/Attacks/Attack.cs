using SieveQ.Deployment;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;

namespace SieveQ.Attacks.Attacks;

/// <summary>The running deployment, as an attack sees it.</summary>
internal sealed record AttackTarget(string Directory, DeploymentConfig Config, DeploymentContext Context, IReadOnlyList<SieveQSender> LegitimateSenders,
    SieveQReceiver Receiver);

/// <summary>
/// One attack kind: how the deployment is shaped for it, the attacker itself (real connections, real frames, or a
/// real component process with a compromising stage), and where the countermeasure's work shows.
/// </summary>
internal abstract class Attack : IAsyncDisposable
{
    public abstract string Description { get; }

    /// <summary>What should stop the attack from hurting legitimate traffic.</summary>
    public abstract string Countermeasure { get; }

    public virtual DeploymentShape Shape => DeploymentShape.AsUp;

    /// <summary>The component whose memory (RSS) the report follows second by second, by its process name (e.g. pre-sq-4), or null.</summary>
    public virtual string? Watched => null;

    /// <summary>The attack's own actions so far (frames sent, messages altered or withheld).</summary>
    public abstract long Applied { get; }

    /// <summary>Work the attacker does ahead (e.g. signing), during the warm-up, so the attack starts at its rate.</summary>
    public virtual Task PrepareAsync(AttackTarget target, CancellationToken ct) => Task.CompletedTask;

    /// <summary>Applies the attack until <paramref name="stop"/>; returns once it stopped.</summary>
    public abstract Task RunAsync(AttackTarget target, CancellationToken stop);

    /// <summary>
    /// The countermeasure's own counts so far, by name (health counters summed over components, SDK statistics, the
    /// attacker's own tally). The run reads them just before the attack's window and again after its quiet time, and
    /// reports the difference, so that an attack sharing a deployment with others is credited only with what happened
    /// in its own window; the names in <see cref="Levels"/> are reported as read the second time.
    /// </summary>
    public abstract Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct);

    /// <summary>Names in <see cref="CountermeasureAsync"/> that are levels or peaks (a gauge's value), not counts since the start.</summary>
    public virtual IReadOnlySet<string> Levels => EmptyLevels;

    private static readonly IReadOnlySet<string> EmptyLevels = new HashSet<string>(StringComparer.Ordinal);

    public virtual ValueTask DisposeAsync() => ValueTask.CompletedTask;

    public static Attack For(AttackKind kind, AttackSettings s) => kind switch
    {
        AttackKind.TamperingPreSq => new CompromisedPreSqAttack("tampering"),
        AttackKind.DroppingPreSq => new CompromisedPreSqAttack("dropping"),
        AttackKind.CompromisedSender => new CompromisedSenderFlood(s.AttackRate, s.Countermeasures, s.Rate / AttackSettings.LegitimateSenders.Count),
        AttackKind.UnauthenticatedFlood => new UnauthenticatedFlood(s.AttackRate),
        AttackKind.Slowloris => new Slowloris(),
        AttackKind.H2Flood => new H2Flood(s.AttackRate),
        AttackKind.Oversize => new OversizeFrames(s.AttackRate),
        AttackKind.ByzantineReplica => new ByzantineReplicaAttack(),
        AttackKind.StateTransferFlood => new StateTransferFlood(s.AttackRate),
        AttackKind.WithholdingReplica => new WithholdingReplicaAttack(),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "no such attack"),
    };

    /// <summary>Health counters of one component (by name, e.g. pre-sq-4) whose name ends with <paramref name="suffix"/>, summed.</summary>
    protected static async Task<long> ComponentCounterAsync(DeploymentConfig config, string name, string suffix, CancellationToken ct)
    {
        var all = await DeploymentHealth.ProbeAllAsync(config with { Agents = [] }, TimeSpan.FromSeconds(5), ct).ConfigureAwait(false);
        return all.Where(h => h.Name == name)
            .Sum(h => h.Counters.Where(kv => kv.Key.EndsWith(suffix, StringComparison.Ordinal)).Sum(kv => kv.Value));
    }

    /// <summary>Health counters whose name ends with <paramref name="suffix"/>, summed over the components of one kind.</summary>
    protected static async Task<long> SumCountersAsync(DeploymentConfig config, string component, string suffix, CancellationToken ct)
    {
        var all = await DeploymentHealth.ProbeAllAsync(config with { Agents = [] }, TimeSpan.FromSeconds(5), ct).ConfigureAwait(false);
        return all.Where(h => h.Component == component)
            .Sum(h => h.Counters.Where(kv => kv.Key.EndsWith(suffix, StringComparison.Ordinal)).Sum(kv => kv.Value));
    }
}
