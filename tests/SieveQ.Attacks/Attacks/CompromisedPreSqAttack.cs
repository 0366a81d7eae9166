using SieveQ.Deployment;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// tampering-presq and dropping-presq: the first pre-SQ runs as <see cref="CompromisedPreSqProcess"/>, honest until the
/// attack window, then altering (tampering) or withholding (dropping) every sender message its checks passed.
/// </summary>
internal sealed class CompromisedPreSqAttack(string stage) : Attack
{
    private string? _directory;
    private int _id;

    public override string Description => stage == "tampering"
        ? "a compromised pre-SQ flips a signed byte of every sender message it forwards"
        : "a compromised pre-SQ takes every sender message and forwards none";

    public override string Countermeasure => stage == "tampering"
        ? "replicas refuse the altered copies by the sender's signature and suspect the pre-SQ; senders retransmit through the other pre-SQ"
        : "senders time out on the silent pre-SQ and retransmit through the other";

    public override DeploymentShape Shape => DeploymentShape.AsUp with { CompromisedPreSq = (FirstPreSq, stage) };

    /// <summary>The lowest pre-SQ id the local deployment plan gives (<see cref="DeploymentBootstrap"/>): one legitimate sender starts on it.</summary>
    private const int FirstPreSq = 4;

    public override long Applied => _directory is null ? 0 : CompromisedPreSqProcess.ReadCount(_directory, _id);

    public override Task PrepareAsync(AttackTarget target, CancellationToken ct)
    {
        _id = target.Config.PreSqs.Min(p => p.Id);
        if (_id != FirstPreSq)
        {
            throw new InvalidOperationException($"the deployment's first pre-SQ is {_id}, not {FirstPreSq}");
        }
        _directory = target.Directory;
        return Task.CompletedTask;
    }

    public override async Task RunAsync(AttackTarget target, CancellationToken stop) =>
        await AttackSwitch.HoldOnAsync(CompromisedPreSqProcess.SwitchPath(target.Directory, _id), stop).ConfigureAwait(false);

    /// <summary>Each replica's quarantine of the pre-SQ is a flag (1 while it lasts), summed over the replicas.</summary>
    public override IReadOnlySet<string> Levels { get; } = new HashSet<string>(StringComparer.Ordinal) { $"replica quarantined.pre_sq.{FirstPreSq}" };

    public override async Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct)
    {
        var figures = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["sender_retransmissions"] = target.LegitimateSenders.Sum(s => s.Stats.Retransmissions),
            [$"replica suspicion.pre_sq.{_id}"] = await SumCountersAsync(target.Config, "replica-sq", $"suspicion.pre_sq.{_id}", ct).ConfigureAwait(false),
            [$"replica quarantined.pre_sq.{_id}"] = await SumCountersAsync(target.Config, "replica-sq", $"quarantined.pre_sq.{_id}", ct).ConfigureAwait(false),
        };
        if (stage == "tampering")
        {
            figures["replica drop.*.BadSignature"] = await SumCountersAsync(target.Config, "replica-sq", ".BadSignature", ct).ConfigureAwait(false);
        }
        return figures;
    }
}
