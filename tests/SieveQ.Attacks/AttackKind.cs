namespace SieveQ.Attacks;

/// <summary>The attacks the benchmark applies, by the name `--kind` takes.</summary>
internal enum AttackKind
{
    TamperingPreSq,
    DroppingPreSq,
    CompromisedSender,
    UnauthenticatedFlood,
    Slowloris,
    H2Flood,
    Oversize,
    ByzantineReplica,
    StateTransferFlood,
    WithholdingReplica,
}

internal static class AttackKinds
{
    private static readonly Dictionary<string, AttackKind> ByName = new(StringComparer.Ordinal)
    {
        ["tampering-presq"] = AttackKind.TamperingPreSq,
        ["dropping-presq"] = AttackKind.DroppingPreSq,
        ["compromised-sender"] = AttackKind.CompromisedSender,
        ["unauthenticated-flood"] = AttackKind.UnauthenticatedFlood,
        ["slowloris"] = AttackKind.Slowloris,
        ["h2-flood"] = AttackKind.H2Flood,
        ["oversize"] = AttackKind.Oversize,
        ["byzantine-replica"] = AttackKind.ByzantineReplica,
        ["state-transfer-flood"] = AttackKind.StateTransferFlood,
        ["withholding-replica"] = AttackKind.WithholdingReplica,
    };

    public static IEnumerable<string> Names => ByName.Keys;

    public static bool TryParse(string name, out AttackKind kind) => ByName.TryGetValue(name, out kind);

    public static string Name(AttackKind kind) => ByName.Single(kv => kv.Value == kind).Key;

    /// <summary>
    /// The kinds `--kind` names, in the order given: each occurrence of the option may list several, separated by
    /// commas. Throws <see cref="FormatException"/> for an unknown, repeated or empty name.
    /// </summary>
    public static IReadOnlyList<AttackKind> ParseList(IEnumerable<string> values)
    {
        var kinds = new List<AttackKind>();
        foreach (var name in values.SelectMany(v => v.Split(',', StringSplitOptions.TrimEntries)))
        {
            if (name.Length == 0)
            {
                throw new FormatException("--kind: an empty name (two commas, or one at an end)");
            }
            if (!TryParse(name, out var kind))
            {
                throw new FormatException($"--kind {name}: no such attack; one of {string.Join(", ", Names)}");
            }
            if (kinds.Contains(kind))
            {
                throw new FormatException($"--kind {name}: named twice; each kind runs once per run");
            }
            kinds.Add(kind);
        }
        return kinds.Count > 0 ? kinds : throw new FormatException("--kind: no attack named");
    }
}
