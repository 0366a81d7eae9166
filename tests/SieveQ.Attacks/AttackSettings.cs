namespace SieveQ.Attacks;

/// <summary>One attack run: the legitimate load, the three phases (before, during, after the attack) and the attack's own rate.</summary>
internal sealed record AttackSettings(
    AttackKind Kind,
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

    public TimeSpan Measured => Before + During + After;

    /// <summary>What is wrong with the settings, or null.</summary>
    public string? Problem() =>
        Rate < 2 ? "--rate must be at least 2 (one message per second per sender)"
        : Size is < LegitimatePayload.HeaderBytes or > 65_536 ? $"--size must be {LegitimatePayload.HeaderBytes}..65536"
        : Before < TimeSpan.FromSeconds(1) || During < TimeSpan.FromSeconds(1) || After < TimeSpan.Zero || Warmup < TimeSpan.Zero
            ? "--before and --during must be at least 1s, --after and --warmup at least 0s"
        : Measured > TimeSpan.FromHours(1) ? "the measured run (before + during + after) is limited to one hour"
        : AttackRate < 1 ? "--attack-rate must be at least 1"
        : !Countermeasures && Kind != AttackKind.CompromisedSender
            ? $"--no-countermeasures: {AttackKinds.Name(Kind)} has no countermeasure that can be switched off (only compromised-sender: its grant)"
        : null;
}
