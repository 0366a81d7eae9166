using SieveQ.Deployment;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;

namespace SieveQ.Attacks.Attacks;

/// <summary>What an attack needs from the deployment before it is launched.</summary>
/// <param name="ExtraSenders">Enrolled senders besides the legitimate ones (a compromised sender's identity).</param>
/// <param name="CompromisedPreSq">A pre-SQ started as <see cref="CompromisedPreSqProcess"/> with this stage, instead of `sieveq pre-sq`.</param>
/// <param name="PreSqOptions">Further `sieveq pre-sq` options for every pre-SQ.</param>
/// <param name="CompromisedReplica">A replica-SQ started as <see cref="CompromisedReplicaSqProcess"/>, instead of `sieveq replica-sq`.</param>
internal sealed record DeploymentShape(IReadOnlyList<int> ExtraSenders, (int Id, string Stage)? CompromisedPreSq, IReadOnlyList<string> PreSqOptions,
    int? CompromisedReplica = null)
{
    public static readonly DeploymentShape AsUp = new([], null, []);
}

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

    /// <summary>The countermeasure's own counts after the run, by name (health counters summed over components, SDK statistics).</summary>
    public abstract Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct);

    public virtual ValueTask DisposeAsync() => ValueTask.CompletedTask;

    public static Attack For(AttackSettings s) => s.Kind switch
    {
        AttackKind.TamperingPreSq => new CompromisedPreSqAttack("tampering"),
        AttackKind.DroppingPreSq => new CompromisedPreSqAttack("dropping"),
        AttackKind.CompromisedSender => new CompromisedSenderFlood(s.AttackRate, s.Countermeasures, s.Rate / AttackSettings.LegitimateSenders.Count),
        AttackKind.UnauthenticatedFlood => new UnauthenticatedFlood(s.AttackRate),
        AttackKind.Slowloris => new Slowloris(),
        AttackKind.H2Flood => new H2Flood(s.AttackRate),
        AttackKind.Oversize => new OversizeFrames(s.AttackRate),
        AttackKind.ByzantineReplica => new ByzantineReplicaAttack(),
        _ => throw new ArgumentOutOfRangeException(nameof(s), s.Kind, "no such attack"),
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
