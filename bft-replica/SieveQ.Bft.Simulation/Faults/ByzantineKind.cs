namespace SieveQ.Bft.Simulation.Faults;

/// <summary>What a Byzantine replica does to its real core's inputs and outputs. Names are the CLI's.</summary>
public enum ByzantineKind
{
    /// <summary>As leader, different valid proposals to different replicas, WRITEs signed for each.</summary>
    Equivocate,
    /// <summary>Sends nothing from some moment on.</summary>
    Silent,
    /// <summary>Never lets one client's requests reach its core, so it never proposes them.</summary>
    Censor,
    /// <summary>As leader, holds every output back by close to the time-outs.</summary>
    SlowLeader,
    /// <summary>Flips bytes of frames or fields of messages, re-signing some so they reach the core's logic.</summary>
    Mutate,
    /// <summary>STOPDATA with fabricated, truncated, wrong-regency or value-mismatched certificates.</summary>
    BadStopData,
    /// <summary>As new leader, SYNC with a wrong choice, too little or tampered evidence.</summary>
    BadSync,
    /// <summary>Re-sends old messages, its own and others', and re-proposes executed requests.</summary>
    Replay,
    /// <summary>Random signature bytes, or other replicas' signatures passed off as its own or nested in certificates.</summary>
    ForgeSignatures,
    /// <summary>Floods messages for consensus instances far ahead, and bogus progress claims.</summary>
    FloodFuture,
    /// <summary>Floods state-transfer requests asking for the full body, and unsolicited state replies.</summary>
    FloodState,
    /// <summary>As leader, proposes timestamps far in the future, far in the past, or before the last decided one.</summary>
    BadTimestamps,
    /// <summary>Requests in other clients' names (made up, renumbered, altered, re-attributed) on every path; as leader, reorders and withholds.</summary>
    ForgeRequests,
    /// <summary>Serves state-transfer chunks with flipped bytes, wrong lengths, another chunk's data or false refusals, and lies in its manifests.</summary>
    BadChunks,
}

public static class ByzantineKindNames
{
    private static readonly (ByzantineKind Kind, string Name)[] Table =
    [
        (ByzantineKind.Equivocate, "equivocate"),
        (ByzantineKind.Silent, "silent"),
        (ByzantineKind.Censor, "censor"),
        (ByzantineKind.SlowLeader, "slow-leader"),
        (ByzantineKind.Mutate, "mutate"),
        (ByzantineKind.BadStopData, "bad-stopdata"),
        (ByzantineKind.BadSync, "bad-sync"),
        (ByzantineKind.Replay, "replay"),
        (ByzantineKind.ForgeSignatures, "forge-signatures"),
        (ByzantineKind.FloodFuture, "flood-future"),
        (ByzantineKind.FloodState, "flood-state"),
        (ByzantineKind.BadTimestamps, "bad-timestamps"),
        (ByzantineKind.ForgeRequests, "forge-requests"),
        (ByzantineKind.BadChunks, "bad-chunks"),
    ];

    public static IReadOnlyList<ByzantineKind> All { get; } = Table.Select(t => t.Kind).ToArray();

    public static string Name(this ByzantineKind kind) => Table.First(t => t.Kind == kind).Name;

    public static bool TryParse(string name, out ByzantineKind kind)
    {
        foreach (var (k, n) in Table)
        {
            if (string.Equals(n, name, StringComparison.OrdinalIgnoreCase))
            {
                kind = k;
                return true;
            }
        }
        kind = default;
        return false;
    }

    /// <summary>Behaviours that only bite while the Byzantine replica leads a regency.</summary>
    public static bool NeedsLeadership(this ByzantineKind kind) =>
        kind is ByzantineKind.Equivocate or ByzantineKind.Censor or ByzantineKind.SlowLeader or ByzantineKind.BadTimestamps;
}
