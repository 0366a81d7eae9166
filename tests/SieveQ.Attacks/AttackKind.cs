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
    };

    /// <summary>Named in issue 16 and docs/attacks.md, not built yet: refused with that said.</summary>
    public static readonly IReadOnlyList<string> NotBuilt = ["state-transfer-flood"];

    public static IEnumerable<string> Names => ByName.Keys;

    public static bool TryParse(string name, out AttackKind kind) => ByName.TryGetValue(name, out kind);

    public static string Name(AttackKind kind) => ByName.Single(kv => kv.Value == kind).Key;
}
