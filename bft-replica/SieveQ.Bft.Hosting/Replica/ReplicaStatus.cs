using System.Text.Json;
using System.Text.Json.Serialization;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>
/// What a replica reports about itself, written as JSON to <c>status.json</c> in its data directory
/// (atomically, by rename) and optionally printed as a <c>status {json}</c> line; tests and the bench read it.
/// </summary>
public sealed record ReplicaStatus
{
    public int Id { get; init; }
    public int Pid { get; init; }
    public long UpdatedAtMs { get; init; }
    public int Regency { get; init; }
    public int Leader { get; init; }
    public string Mode { get; init; } = "";
    public long LastDecided { get; init; }
    /// <summary>The consensus instance of the newest checkpoint this replica holds.</summary>
    public long LastCheckpoint { get; init; }
    /// <summary>Milliseconds since <see cref="LastDecided"/> last moved (since start if it never did).</summary>
    public long LastDecisionAgeMs { get; init; }
    /// <summary>Milliseconds the replica has been in its current <see cref="Mode"/>.</summary>
    public long ModeAgeMs { get; init; }
    public bool TransferringState { get; init; }
    public int PendingRequests { get; init; }
    public long DecidedInstances { get; init; }
    public long ExecutedRequests { get; init; }
    /// <summary>The application's own description of its state (the benchmark app: count and state hash).</summary>
    public string AppState { get; init; } = "";
    public int ConnectedReplicas { get; init; }
    public int ConnectedClients { get; init; }
    public bool Stopping { get; init; }
    public IReadOnlyDictionary<string, long> CoreCounters { get; init; } = new Dictionary<string, long>();
    public IReadOnlyDictionary<string, long> Transport { get; init; } = new Dictionary<string, long>();
    public IReadOnlyDictionary<string, StageTotal> Stages { get; init; } = new Dictionary<string, StageTotal>();
    public double CpuMs { get; init; }
    /// <summary>Garbage collections by generation (0, 1, 2) and total GC pause time: large batches allocate on the large-object heap.</summary>
    public IReadOnlyList<int> GcCollections { get; init; } = [];
    public double GcPauseMs { get; init; }
    /// <summary>Write-ahead log activity (zero without durability): fsyncs, decision records appended without holding a send, syncs made only for those.</summary>
    public WalStatus Wal { get; init; } = new(0, 0, 0);

    /// <summary>PROPOSE requests that shared a payload received from the client, and those copied.</summary>
    public KnownRequestStatus KnownRequests { get; init; } = new(0, 0, 0);
    public RequestCheckStatus Requests { get; init; } = new(0, 0);

    public static readonly JsonSerializerOptions Json = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.Never,
    };

    public string ToJson() => JsonSerializer.Serialize(this, Json);

    public static ReplicaStatus? TryRead(string path)
    {
        try
        {
            return JsonSerializer.Deserialize<ReplicaStatus>(File.ReadAllText(path), Json);
        }
        catch (Exception e) when (e is IOException or JsonException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    public void WriteAtomically(string path)
    {
        var tmp = path + ".tmp";
        File.WriteAllText(tmp, ToJson());
        File.Move(tmp, path, overwrite: true);
    }
}

/// <summary>The write-ahead log's share of <see cref="ReplicaStatus"/>.</summary>
public sealed record WalStatus(long Syncs, long LazyRecords, long LazySyncs);

public sealed record KnownRequestStatus(long Shared, long Copied, long Aged);

/// <summary>Distinct requests refused before the core: not made by the client they name, or refused by the application's check.</summary>
public sealed record RequestCheckStatus(long BadProofs, long Refused);

/// <summary>Whether a replica is ordering: a stall is work waiting with no decision, or a regency change that does not end.</summary>
public static class OrderingProgress
{
    /// <summary>
    /// Why the replica is not ordering, or null. <paramref name="stallAfterMs"/> should exceed what a healthy regency
    /// change takes (two request time-outs plus a sync time-out), so that one change is not reported as a stall.
    /// </summary>
    public static string? Stall(ReplicaStatus s, long stallAfterMs)
    {
        ArgumentNullException.ThrowIfNull(s);
        if (s.Mode != "Normal" && s.ModeAgeMs >= stallAfterMs)
        {
            return $"not ordering: regency change to {s.Regency} unfinished for {s.ModeAgeMs / 1000.0:0.0} s";
        }
        if (s.PendingRequests > 0 && s.LastDecisionAgeMs >= stallAfterMs)
        {
            return $"not ordering: {s.PendingRequests} requests pending and nothing decided for {s.LastDecisionAgeMs / 1000.0:0.0} s (regency {s.Regency}, mode {s.Mode}, last decided {s.LastDecided}{(s.TransferringState ? ", transferring state" : "")})";
        }
        return null;
    }

    public static long DefaultStallAfterMs(SieveQ.Bft.Core.ReplicaConfig p)
    {
        ArgumentNullException.ThrowIfNull(p);
        return (2L * p.RequestTimeoutMs) + p.SyncTimeoutMs + 1_000;
    }
}
