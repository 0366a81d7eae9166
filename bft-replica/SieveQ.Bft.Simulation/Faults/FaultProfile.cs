namespace SieveQ.Bft.Simulation.Faults;

/// <summary>
/// Which fault families a run may draw from: `none`, `network`, `crash`, `power-loss`, `byzantine`, `all`,
/// or a comma list mixing those with single Byzantine behaviours (`equivocate,network`).
/// <para>
/// `power-loss` (every correct replica loses power at the same instant, unsynced records gone) strikes on
/// every seed when named on its own, and on one seed in <see cref="PowerLossShareInCrash"/> as part of
/// `crash` and `all`: a fixed share, so this class of schedule is never left to the seed's draws.
/// </para>
/// </summary>
public sealed class FaultProfile
{
    /// <summary>One seed in this many of a `crash` or `all` sweep has a whole-cluster power loss.</summary>
    public const int PowerLossShareInCrash = 8;

    private FaultProfile(string name, bool network, bool crash, int powerLossEvery, IReadOnlyList<ByzantineKind> byzantine)
    {
        Name = name;
        Network = network;
        Crash = crash;
        PowerLossEvery = powerLossEvery;
        Byzantine = byzantine;
    }

    /// <summary>The text the profile was parsed from, normalised (lower case, no spaces) so the replay command can repeat it.</summary>
    public string Name { get; }
    public bool Network { get; }
    public bool Crash { get; }
    /// <summary>Seeds divisible by this have a whole-cluster power loss; 0 for none.</summary>
    public int PowerLossEvery { get; }
    public IReadOnlyList<ByzantineKind> Byzantine { get; }
    public bool Any => Network || Crash || PowerLossEvery > 0 || Byzantine.Count > 0;

    /// <summary>Whether the run of this seed has a whole-cluster power loss.</summary>
    public bool PowerLossFor(ulong seed) => PowerLossEvery > 0 && seed % (ulong)PowerLossEvery == 0;

    public static FaultProfile None { get; } = Parse("none");
    public static FaultProfile All { get; } = Parse("all");

    public static FaultProfile Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var network = false;
        var crash = false;
        var powerLoss = false;
        var byz = new SortedSet<ByzantineKind>();
        var tokens = text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        foreach (var raw in tokens)
        {
            switch (raw.ToLowerInvariant())
            {
                case "none":
                    break;
                case "network":
                    network = true;
                    break;
                case "crash":
                    crash = true;
                    break;
                case "power-loss":
                    powerLoss = true;
                    break;
                case "byzantine":
                    byz.UnionWith(ByzantineKindNames.All);
                    break;
                case "all":
                    network = true;
                    crash = true;
                    byz.UnionWith(ByzantineKindNames.All);
                    break;
                default:
                    if (!ByzantineKindNames.TryParse(raw, out var kind))
                    {
                        throw new ArgumentException(
                            $"unknown fault '{raw}'; use none, network, crash, power-loss, byzantine, all or one of: {string.Join(", ", ByzantineKindNames.All.Select(k => k.Name()))}");
                    }
                    byz.Add(kind);
                    break;
            }
        }
        var name = tokens.Length == 0 ? "none" : string.Join(',', tokens.Select(t => t.ToLowerInvariant()));
        var powerLossEvery = powerLoss ? 1 : crash ? PowerLossShareInCrash : 0;
        return new FaultProfile(name, network, crash, powerLossEvery, byz.ToArray());
    }

    public override string ToString() => Name;
}
