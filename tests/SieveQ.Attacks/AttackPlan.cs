using SieveQ.Attacks.Attacks;

namespace SieveQ.Attacks;

/// <summary>The attacks of one run, in the order they are applied, and the one deployment shape that serves them all.</summary>
internal sealed class AttackPlan : IAsyncDisposable
{
    private AttackPlan(AttackSettings settings, IReadOnlyList<Attack> attacks, DeploymentShape shape)
    {
        Settings = settings;
        Attacks = attacks;
        Shape = shape;
    }

    public AttackSettings Settings { get; }

    public IReadOnlyList<Attack> Attacks { get; }

    public DeploymentShape Shape { get; }

    /// <summary>Throws <see cref="FormatException"/> when two of the kinds cannot share a deployment (<see cref="DeploymentShape.Union"/>).</summary>
    public static AttackPlan Create(AttackSettings s)
    {
        var attacks = s.Kinds.Select(k => Attack.For(k, s)).ToList();
        var shape = DeploymentShape.Union([.. s.Kinds.Zip(attacks, (k, a) => (AttackKinds.Name(k), a.Shape))]);
        return new AttackPlan(s, attacks, shape);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var a in Attacks)
        {
            await a.DisposeAsync().ConfigureAwait(false);
        }
    }
}
