namespace SieveQ.Bft.Simulation.Faults;

/// <summary>
/// Which fault families a run may draw from: `none`, `network`, `crash`, `byzantine`, `all`, or a
/// comma list mixing those with single Byzantine behaviours (`equivocate,network`).
/// </summary>
public sealed class FaultProfile
{
    private FaultProfile(string name, bool network, bool crash, IReadOnlyList<ByzantineKind> byzantine)
    {
        Name = name;
        Network = network;
        Crash = crash;
        Byzantine = byzantine;
    }

    /// <summary>The text the profile was parsed from, normalised (lower case, no spaces) so the replay command can repeat it.</summary>
    public string Name { get; }
    public bool Network { get; }
    public bool Crash { get; }
    public IReadOnlyList<ByzantineKind> Byzantine { get; }
    public bool Any => Network || Crash || Byzantine.Count > 0;

    public static FaultProfile None { get; } = Parse("none");
    public static FaultProfile All { get; } = Parse("all");

    public static FaultProfile Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var network = false;
        var crash = false;
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
                            $"unknown fault '{raw}'; use none, network, crash, byzantine, all or one of: {string.Join(", ", ByzantineKindNames.All.Select(k => k.Name()))}");
                    }
                    byz.Add(kind);
                    break;
            }
        }
        var name = tokens.Length == 0 ? "none" : string.Join(',', tokens.Select(t => t.ToLowerInvariant()));
        return new FaultProfile(name, network, crash, byz.ToArray());
    }

    public override string ToString() => Name;
}
