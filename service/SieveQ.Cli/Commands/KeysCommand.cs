using System.CommandLine;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;

namespace SieveQ.Cli.Commands;

/// <summary>`sieveq bft keygen` and `sieveq bft init-cluster`: identity keys and cluster configuration files.</summary>
internal static class KeysCommand
{
    public static Command Build()
    {
        var bft = new Command("bft", "BFT cluster administration: identity keys and cluster configuration.");
        bft.Subcommands.Add(BuildKeygen());
        bft.Subcommands.Add(BuildInitCluster());
        return bft;
    }

    private static Command BuildKeygen()
    {
        var output = new Option<FileInfo>("--out") { Description = "Where to write the private key (PKCS#8 PEM, mode 0600).", Required = true };
        var cmd = new Command("keygen", "Create a P-256 identity key and print its public key (base64 SPKI) for the cluster config.") { output };
        cmd.SetAction(parse =>
        {
            var file = parse.GetValue(output)!;
            if (file.Exists)
            {
                Console.Error.WriteLine($"{file.FullName} exists; refusing to overwrite a key");
                return 1;
            }
            using var key = IdentityKey.Generate();
            key.Save(file.FullName);
            Console.WriteLine(key.PublicKeyBase64);
            return 0;
        });
        return cmd;
    }

    private static Command BuildInitCluster()
    {
        var replicas = new Option<int>("--replicas") { Description = "Number of replicas, 3f+1.", DefaultValueFactory = _ => 4 };
        var clients = new Option<int>("--clients") { Description = "Number of client identities.", DefaultValueFactory = _ => 8 };
        var dir = new Option<DirectoryInfo>("--dir") { Description = "Directory for cluster.json and keys/.", Required = true };
        var basePort = new Option<int>("--base-port") { Description = "Replica i listens on base-port + i.", DefaultValueFactory = _ => 7400 };
        var host = new Option<string>("--host") { Description = "Address the replicas listen on.", DefaultValueFactory = _ => "127.0.0.1" };
        var durability = new Option<bool>("--durability") { Description = "Turn on the write-ahead log (fsync before acting on decisions)." };
        var cmd = new Command("init-cluster", "Generate identity keys for every replica and client and write the cluster configuration.")
        {
            replicas, clients, dir, basePort, host, durability,
        };
        cmd.SetAction(parse =>
        {
            var d = parse.GetValue(dir)!;
            if (File.Exists(Path.Combine(d.FullName, ClusterBootstrap.ConfigFileName)))
            {
                Console.Error.WriteLine($"{d.FullName} already holds a cluster; refusing to overwrite its keys");
                return 1;
            }
            var cfg = ClusterBootstrap.Create(d.FullName, parse.GetValue(replicas), parse.GetValue(clients), parse.GetValue(basePort),
                new ReplicaConfig(), parse.GetValue(durability), parse.GetValue(host)!);
            Console.WriteLine($"wrote {Path.Combine(d.FullName, ClusterBootstrap.ConfigFileName)}: {cfg.N} replicas (f={cfg.Protocol.F}), {cfg.Clients.Count} clients, durability {(cfg.Durability ? "on" : "off")}");
            foreach (var r in cfg.Replicas)
            {
                Console.WriteLine($"  replica {r.Id} at {r.Endpoint}: sieveq replica --config {Path.Combine(d.FullName, ClusterBootstrap.ConfigFileName)} --id {r.Id}");
            }
            return 0;
        });
        return cmd;
    }
}
