namespace SieveQ.Attacks;

/// <summary>
/// One attack run: the legitimate load, the attacks in the order they are applied, and the phases: <see cref="Before"/>
/// of quiet, then each attack for <see cref="During"/> with <see cref="Before"/> of quiet between two attacks (the
/// next one's "before", the previous one's "after"), and <see cref="After"/> once the last one stopped.
/// </summary>
internal sealed record AttackSettings(
    IReadOnlyList<AttackKind> Kinds,
    int Rate,
    int Size,
    TimeSpan Warmup,
    TimeSpan Before,
    TimeSpan During,
    TimeSpan After,
    int AttackRate,
    bool Countermeasures,
    bool Keep,
    string LogLevel)
{
    /// <summary>Legitimate senders; each offers an equal share of <see cref="Rate"/>.</summary>
    public static readonly IReadOnlyList<int> LegitimateSenders = [1, 2];

    public const int Receiver = 100;

    public TimeSpan Measured => Before + (During * Kinds.Count) + (Before * (Kinds.Count - 1)) + After;

    /// <summary>When attack <paramref name="index"/> starts, from the start of the measured run.</summary>
    public TimeSpan WindowStart(int index) => Before + ((During + Before) * index);

    public TimeSpan WindowEnd(int index) => WindowStart(index) + During;

    /// <summary>The quiet time after attack <paramref name="index"/>: the gap before the next one, or <see cref="After"/> after the last.</summary>
    public TimeSpan QuietAfter(int index) => index < Kinds.Count - 1 ? Before : After;

    /// <summary>What is wrong with the settings, or null.</summary>
    public string? Problem() =>
        Kinds.Count == 0 ? "--kind: no attack named"
        : Rate < 2 ? "--rate must be at least 2 (one message per second per sender)"
        : Size is < LegitimatePayload.HeaderBytes or > 65_536 ? $"--size must be {LegitimatePayload.HeaderBytes}..65536"
        : Before < TimeSpan.FromSeconds(1) || During < TimeSpan.FromSeconds(1) || After < TimeSpan.Zero || Warmup < TimeSpan.Zero
            ? "--before and --during must be at least 1s, --after and --warmup at least 0s"
        : Measured > TimeSpan.FromHours(1) ? "the measured run (before + each attack and the gaps between them + after) is limited to one hour"
        : AttackRate < 1 ? "--attack-rate must be at least 1"
        : !Countermeasures && Kinds.Any(k => k != AttackKind.CompromisedSender)
            ? $"--no-countermeasures: {AttackKinds.Name(Kinds.First(k => k != AttackKind.CompromisedSender))} has no countermeasure that can be switched off (only compromised-sender: its grant)"
        : null;
}
