using System.Net;
using SieveQ.Bft.Core;

namespace SieveQ.Bft.Hosting.Config;

/// <summary>A replica as every member of the cluster knows it: where to dial it and which key it must prove.</summary>
public sealed record ReplicaEntry
{
    public required int Id { get; init; }
    /// <summary>host:port; loopback or an address, never a name, so startup does not depend on DNS.</summary>
    public required string Endpoint { get; init; }
    /// <summary>Base64 SubjectPublicKeyInfo of the replica's P-256 identity key (pinned: the only key it may use).</summary>
    public required string PublicKey { get; init; }
    /// <summary>Path of the private key, relative to the config file; present only on the host that runs this replica.</summary>
    public string? KeyFile { get; init; }

    public IPEndPoint ParseEndpoint() => IPEndPoint.Parse(Endpoint);
}

public sealed record ClientEntry
{
    public required int Id { get; init; }
    public required string PublicKey { get; init; }
    public string? KeyFile { get; init; }
}

/// <summary>Transport bounds; defaults suit a LAN cluster.</summary>
public sealed record LinkSettings
{
    /// <summary>Frames queued towards one peer before new ones are dropped (and counted).</summary>
    public int SendQueueFrames { get; init; } = 65_536;
    public long SendQueueBytes { get; init; } = 64L * 1024 * 1024;
    /// <summary>Messages from one peer waiting for the core; when full the link stops reading (TCP back-pressure).</summary>
    public int InboundCredits { get; init; } = 8_192;
    /// <summary>Encoded bytes from one peer waiting for the core (at least one message is always admitted).</summary>
    public long InboundBytes { get; init; } = 64L * 1024 * 1024;
    public int HandshakeTimeoutMs { get; init; } = 5_000;
    /// <summary>Unauthenticated connections allowed to be mid-handshake at once; more are closed at once (connection floods).</summary>
    public int MaxPendingHandshakes { get; init; } = 256;
    public int ReconnectMinMs { get; init; } = 50;
    public int ReconnectMaxMs { get; init; } = 2_000;
}

/// <summary>
/// The cluster configuration file: membership with pinned identity keys, the protocol settings every
/// replica must share, and host-local settings (data directory, durability).
/// </summary>
public sealed record ClusterConfig
{
    public required ReplicaConfig Protocol { get; init; }
    public required IReadOnlyList<ReplicaEntry> Replicas { get; init; }
    public required IReadOnlyList<ClientEntry> Clients { get; init; }
    /// <summary>Relative to the config file; each replica uses a sub-directory named after its id.</summary>
    public string DataDir { get; init; } = "data";
    public bool Durability { get; init; }
    public LinkSettings Links { get; init; } = new();

    /// <summary>Directory the config file was loaded from; relative paths resolve against it.</summary>
    [System.Text.Json.Serialization.JsonIgnore]
    public string BaseDirectory { get; init; } = Directory.GetCurrentDirectory();

    public int N => Replicas.Count;

    public string ResolvePath(string path) => Path.IsPathRooted(path) ? path : Path.GetFullPath(Path.Combine(BaseDirectory, path));

    public string ReplicaDataDir(int id) => Path.Combine(ResolvePath(DataDir), $"replica-{id}");

    public ReplicaEntry Replica(int id) => Replicas.FirstOrDefault(r => r.Id == id) ?? throw new ArgumentException($"no replica {id} in the cluster config");

    public ClientEntry Client(int id) => Clients.FirstOrDefault(c => c.Id == id) ?? throw new ArgumentException($"no client {id} in the cluster config");

    /// <summary>Checks the invariants the hosts rely on, so a bad file fails at startup rather than mid-protocol.</summary>
    public void Validate()
    {
        Protocol.Validate();
        if (Protocol.N != Replicas.Count)
        {
            throw new InvalidDataException($"protocol.n is {Protocol.N} but {Replicas.Count} replicas are listed");
        }
        for (var i = 0; i < Replicas.Count; i++)
        {
            if (Replicas.All(r => r.Id != i))
            {
                throw new InvalidDataException($"replica ids must be 0..n-1; {i} is missing");
            }
        }
        var ids = new HashSet<int>();
        foreach (var c in Clients)
        {
            if (c.Id < N)
            {
                throw new InvalidDataException($"client id {c.Id} collides with replica ids 0..{N - 1}");
            }
            if (!ids.Add(c.Id))
            {
                throw new InvalidDataException($"client id {c.Id} listed twice");
            }
        }
        foreach (var r in Replicas)
        {
            _ = r.ParseEndpoint();
        }
    }
}
