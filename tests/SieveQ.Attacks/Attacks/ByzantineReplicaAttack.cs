namespace SieveQ.Attacks.Attacks;

/// <summary>
/// byzantine-replica: replica-SQ <see cref="Liar"/> runs as <see cref="CompromisedReplicaSqProcess"/>, honest in the
/// ordering, and from the attack window on streams every body to the receiver with other bytes behind the agreed
/// digests. The receiver's SDK checks each body against the digest f+1 replicas agreed on, refuses the liar's and
/// fetches the body from another replica.
/// </summary>
internal sealed class ByzantineReplicaAttack : Attack
{
    /// <summary>The compromised replica (the local plan numbers replicas 0 to 3).</summary>
    public const int Liar = 3;

    private string? _directory;

    public override string Description => $"replica-SQ {Liar}, compromised, streams every message body to the receiver with its last byte flipped (the agreed digests unchanged)";

    public override string Countermeasure => "the receiver SDK takes a body only if it matches the digest f+1 replicas agreed on; a mismatch is refused and the body fetched from another replica";

    public override DeploymentShape Shape => DeploymentShape.AsUp with { CompromisedReplica = Liar };

    public override string? Watched => $"replica-sq-{Liar}";

    public override long Applied => _directory is null ? 0 : AttackSwitch.ReadCount(CompromisedReplicaSqProcess.CountPath(_directory, Liar));

    public override Task PrepareAsync(AttackTarget target, CancellationToken ct)
    {
        _directory = target.Directory;
        return Task.CompletedTask;
    }

    public override async Task RunAsync(AttackTarget target, CancellationToken stop)
    {
        await AttackSwitch.HoldOnAsync(CompromisedReplicaSqProcess.SwitchPath(target.Directory, Liar), stop).ConfigureAwait(false);
    }

    public override Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct)
    {
        var stats = target.Receiver.Stats;
        IReadOnlyDictionary<string, long> figures = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["receiver outputs_rejected"] = stats.OutputsRejected,
            ["receiver fetches_sent"] = stats.FetchesSent,
            ["receiver fetches_answered"] = stats.FetchesAnswered,
            ["receiver outputs_accepted"] = stats.OutputsAccepted,
        };
        return Task.FromResult(figures);
    }
}
