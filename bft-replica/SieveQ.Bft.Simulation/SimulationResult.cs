namespace SieveQ.Bft.Simulation;

/// <summary>Figures of one run, for the CLI summary and for tests that check a behaviour was exercised.</summary>
public sealed record SimulationStats
{
    public required long SimulatedMs { get; init; }
    public required long Steps { get; init; }
    public required long DecidedInstances { get; init; }
    public required int ExecutedRequests { get; init; }
    public required int SubmittedRequests { get; init; }
    /// <summary>Highest regency any correct replica reached: how many leader changes the run forced.</summary>
    public required int RegencyChanges { get; init; }
    public required long MessagesSent { get; init; }
    /// <summary>Rejections by the simulated hosts and network ("host.*", "net.*") and Byzantine actions ("byz.*").</summary>
    public required IReadOnlyDictionary<string, long> Counters { get; init; }
    /// <summary>The correct cores' own counters summed ("drop.*", "complaint.*", "state-transfer.*" ...).</summary>
    public required IReadOnlyDictionary<string, long> CoreCounters { get; init; }
    public required int MaxDiskRecords { get; init; }
    /// <summary>Which replicas the plan made Byzantine, and which crashed at least once.</summary>
    public required IReadOnlyList<int> ByzantineReplicas { get; init; }
    public required IReadOnlyList<int> CrashedReplicas { get; init; }
    /// <summary>
    /// Correct replicas still behind the highest decided instance when the run ended. Not a
    /// failure: with no traffic left, a replica learns it is behind only from f+1 peers' progress.
    /// </summary>
    public required int LaggingAtEnd { get; init; }

    public long Counter(string name) => Counters.TryGetValue(name, out var v) ? v : 0;
    public long CoreCounter(string name) => CoreCounters.TryGetValue(name, out var v) ? v : 0;
    public long CountersWithPrefix(string prefix) => Counters.Where(kv => kv.Key.StartsWith(prefix, StringComparison.Ordinal)).Sum(kv => kv.Value);
    public long CoreCountersWithPrefix(string prefix) => CoreCounters.Where(kv => kv.Key.StartsWith(prefix, StringComparison.Ordinal)).Sum(kv => kv.Value);
}

public sealed record SimulationResult(ulong Seed, string Faults, int Replicas, bool Passed, string? Failure, SimulationStats Stats, ulong TraceHash)
{
    public string ReplayCommand => SimulationRun.ReplayCommand(Seed, Faults, Replicas);
}
