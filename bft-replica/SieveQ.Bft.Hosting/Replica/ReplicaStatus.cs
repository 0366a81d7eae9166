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
