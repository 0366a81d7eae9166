using SieveQ.Bft.Core;

namespace SieveQ.Bft.Simulation.Faults;

/// <summary>
/// Directed links cut for a while. Nodes are numbered replicas first (0..n-1), then clients
/// (n..n+c-1), so one matrix covers replica and client links.
/// </summary>
public sealed record PartitionWindow(long Start, long End, string Description, bool[,] Blocked)
{
    public bool Cuts(int fromNode, int toNode, long now) => now >= Start && now < End && Blocked[fromNode, toNode];
}

/// <param name="TornAfterOutputs">
/// When set, the crash strikes in the middle of the replica's next step, after this many of its
/// outputs were acted on: what was persisted stays, what came after is lost.
/// </param>
/// <param name="AtRegencyChange">
/// The crash is armed at <paramref name="CrashAt"/> but strikes only inside the first step that
/// installs a new regency, the moment a lost SYNC or STOPDATA hurts most; never if none comes.
/// </param>
/// <param name="Planned">
/// A planned stop (a recovery): the replica steps down first if it leads (its STOP sent), then stops.
/// </param>
public sealed record CrashWindow(int Replica, long CrashAt, long RestartAt, int? TornAfterOutputs = null, bool AtRegencyChange = false, bool Planned = false);

/// <summary>
/// Every correct replica loses power at the same instant: at <paramref name="ArmedAt"/>, or, when
/// <paramref name="AtNextDecision"/>, right after the first decision any replica makes from then on (when
/// decision records are least likely to be synced). A replica listed in <paramref name="TornAfterOutputs"/>
/// loses it inside its next step instead, after that many outputs. Each restarts after its own delay.
/// </summary>
public sealed record PowerLoss(long ArmedAt, bool AtNextDecision, IReadOnlyList<long> RestartDelays, IReadOnlyDictionary<int, int> TornAfterOutputs);

public sealed record ByzantineAssignment(int Replica, IReadOnlyList<ByzantineKind> Kinds, long SilentFrom, double SlowFraction, int CensoredClient);

/// <summary>Everything a seed decides before the run starts: configuration, traffic and the faults with their times.</summary>
public sealed class FaultPlan
{
    public required ReplicaConfig Config { get; init; }
    public required int Clients { get; init; }
    public required IReadOnlyList<int> RequestsPerClient { get; init; }
    /// <summary>Last moment a client starts a new request (it may still be waiting for window space after it).</summary>
    public required long TrafficEnd { get; init; }
    public required int MaxPayloadBytes { get; init; }
    public required long ClientRetransmitMs { get; init; }
    public required int ClientMaxOutstanding { get; init; }

    /// <summary>From this time the network is reliable and crashed replicas are back. Byzantine replicas stay Byzantine.</summary>
    public required long HealAt { get; init; }
    public required double Loss { get; init; }
    public required double Duplicate { get; init; }
    public required long BaseDelayMs { get; init; }
    public required long JitterMs { get; init; }
    public required IReadOnlyList<PartitionWindow> Partitions { get; init; }
    public required IReadOnlyList<CrashWindow> Crashes { get; init; }
    public required IReadOnlyList<ByzantineAssignment> Byzantine { get; init; }
    public IReadOnlyList<PowerLoss> PowerLosses { get; init; } = [];
    /// <summary>Each replica's clock runs this far ahead of simulated time (within the timestamp skew).</summary>
    public required IReadOnlyList<long> ClockOffsets { get; init; }
    /// <summary>Each replica also ticks at this period, on top of the wake-ups its core asks for.</summary>
    public required IReadOnlyList<long> TickPeriods { get; init; }
    /// <summary>Every submitted request must be complete by then.</summary>
    public required long LivenessDeadline { get; init; }

    public int Replicas => Config.N;
    public int TotalRequests => RequestsPerClient.Sum();
    public bool IsByzantine(int replica) => Byzantine.Any(b => b.Replica == replica);
    public int ClientId(int index) => 1000 + index;

    public IEnumerable<string> Describe()
    {
        yield return $"n={Replicas} f={Config.F} checkpoint={Config.CheckpointInterval} batch<={Config.MaxBatchRequests} clients={Clients} requests={TotalRequests} traffic-end={TrafficEnd}ms";
        yield return $"heal at {HealAt}ms; before it loss={Loss:F2} dup={Duplicate:F2} delay={BaseDelayMs}+0..{JitterMs}ms; liveness deadline {LivenessDeadline}ms";
        foreach (var p in Partitions)
        {
            yield return $"partition {p.Start}..{p.End}ms: {p.Description}";
        }
        foreach (var c in Crashes)
        {
            yield return $"{(c.Planned ? "planned stop (stepping down if leading) of" : "crash")} replica {c.Replica} {(c.AtRegencyChange ? "at its first regency change after " : "at ")}{c.CrashAt}ms{(c.TornAfterOutputs is { } k ? $" (torn: inside its next step, after {k} outputs)" : "")}, restart at {c.RestartAt}ms";
        }
        foreach (var p in PowerLosses)
        {
            yield return $"power loss of every correct replica {(p.AtNextDecision ? "at the first decision after " : "at ")}{p.ArmedAt}ms"
                + (p.TornAfterOutputs.Count > 0 ? $" (torn: {string.Join(", ", p.TornAfterOutputs.Select(t => $"replica {t.Key} after {t.Value} outputs"))})" : "")
                + $", restarts after {string.Join("/", p.RestartDelays)}ms";
        }
        foreach (var b in Byzantine)
        {
            yield return $"byzantine replica {b.Replica}: {string.Join(", ", b.Kinds.Select(k => k.Name()))}"
                + (b.Kinds.Contains(ByzantineKind.Silent) ? $" (silent from {b.SilentFrom}ms)" : "")
                + (b.Kinds.Contains(ByzantineKind.SlowLeader) ? $" (slow x{b.SlowFraction:F2})" : "")
                + (b.Kinds.Contains(ByzantineKind.Censor) ? $" (censors client {b.CensoredClient})" : "");
        }
    }
}
