using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Crypto;

namespace SieveQ.Bft.Hosting.Config;

/// <summary>Creates a fresh cluster: one identity key per replica and client (PEM, 0600) and the config that pins them.</summary>
public static class ClusterBootstrap
{
    public const string ConfigFileName = "cluster.json";

    public static ClusterConfig Create(string directory, int replicas, int clients, int basePort, ReplicaConfig? protocol = null, bool durability = false, string host = "127.0.0.1")
    {
        if (clients < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(clients), "at least one client");
        }
        Directory.CreateDirectory(directory);
        var keyDir = Path.Combine(directory, "keys");
        Directory.CreateDirectory(keyDir);
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(keyDir, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
        var replicaEntries = new List<ReplicaEntry>();
        for (var i = 0; i < replicas; i++)
        {
            var keyFile = Path.Combine("keys", $"replica-{i}.pem");
            using var key = IdentityKey.Generate();
            key.Save(Path.Combine(directory, keyFile));
            replicaEntries.Add(new ReplicaEntry { Id = i, Endpoint = $"{host}:{basePort + i}", PublicKey = key.PublicKeyBase64, KeyFile = keyFile });
        }
        var clientEntries = new List<ClientEntry>();
        for (var c = 0; c < clients; c++)
        {
            var id = replicas + c;
            var keyFile = Path.Combine("keys", $"client-{id}.pem");
            using var key = IdentityKey.Generate();
            key.Save(Path.Combine(directory, keyFile));
            clientEntries.Add(new ClientEntry { Id = id, PublicKey = key.PublicKeyBase64, KeyFile = keyFile });
        }
        var config = new ClusterConfig
        {
            Protocol = (protocol ?? new ReplicaConfig()) with { N = replicas },
            Replicas = replicaEntries,
            Clients = clientEntries,
            DataDir = "data",
            Durability = durability,
            BaseDirectory = Path.GetFullPath(directory),
        };
        config.Validate();
        ClusterConfigFile.Save(config, Path.Combine(directory, ConfigFileName));
        return config;
    }

    /// <summary>Loads the private key of a node from the key file the config names.</summary>
    public static IdentityKey LoadKey(ClusterConfig config, int nodeId)
    {
        var file = nodeId < config.N ? config.Replica(nodeId).KeyFile : config.Client(nodeId).KeyFile;
        if (file is null)
        {
            throw new InvalidDataException($"the config names no key file for node {nodeId}");
        }
        return IdentityKey.Load(config.ResolvePath(file));
    }
}
