namespace SieveQ.Attacks.Attacks;

/// <summary>
/// withholding-replica: replica-SQ <see cref="Silent"/> runs as <see cref="CompromisedReplicaSqProcess"/>, honest in the
/// ordering, and from the attack window on sends the receiver nothing it owes it: no digest votes, none of the bodies it
/// is designated to stream (a quarter of all, by the rotation), no answer to a body fetch. The receiver's post-SQ
/// delivers on f+1 matching votes from the three others and, once a body's designated replica stays silent past the
/// fetch grace, fetches it from one of the replicas that voted for it.
/// </summary>
internal sealed class WithholdingReplicaAttack : Attack
{
    /// <summary>
    /// The compromised replica: the same process as byzantine-replica's, so the two kinds can share a deployment. Any
    /// replica is designated for the same share of the bodies; none is asked first for a fetch, since only voters are.
    /// </summary>
    public const int Silent = ByzantineReplicaAttack.Liar;

    private string? _directory;

    public override string Description => $"replica-SQ {Silent}, compromised, orders honestly and sends the receiver nothing: no digest votes, "
        + "none of the bodies it is designated to stream (about a quarter), no answer to a body fetch (held until the receiver gives up)";

    public override string Countermeasure => "the receiver SDK delivers on f+1 matching votes from the other replicas and fetches, after its fetch grace "
        + "(50 ms), the bodies the silent replica was designated for from a replica that voted for them";

    public override DeploymentShape Shape => DeploymentShape.AsUp with { CompromisedReplica = Silent };

    public override string? Watched => $"replica-sq-{Silent}";

    /// <summary>Output items withheld (votes, with the bodies the replica was designated for).</summary>
    public override long Applied => _directory is null ? 0 : AttackSwitch.ReadCount(CompromisedReplicaSqProcess.WithheldCountPath(_directory, Silent));

    public override Task PrepareAsync(AttackTarget target, CancellationToken ct)
    {
        _directory = target.Directory;
        return Task.CompletedTask;
    }

    public override async Task RunAsync(AttackTarget target, CancellationToken stop)
    {
        await AttackSwitch.HoldOnAsync(CompromisedReplicaSqProcess.WithholdingSwitchPath(target.Directory, Silent), stop).ConfigureAwait(false);
    }

    public override async Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct)
    {
        var stats = target.Receiver.Stats;
        var answered = await SumCountersAsync(target.Config, "replica-sq", "body_fetches.answered", ct).ConfigureAwait(false);
        IReadOnlyDictionary<string, long> figures = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["receiver outputs_accepted"] = stats.OutputsAccepted,
            ["receiver outputs_rejected"] = stats.OutputsRejected,
            ["receiver fetches_sent"] = stats.FetchesSent,
            ["receiver fetches_answered"] = stats.FetchesAnswered,
            ["receiver resubscribes"] = stats.Resubscribes,
            ["replicas' body_fetches.answered"] = answered,
            [$"replica-SQ {Silent} fetches held unanswered"] = AttackSwitch.ReadCount(CompromisedReplicaSqProcess.FetchesHeldCountPath(target.Directory, Silent)),
        };
        return figures;
    }
}
