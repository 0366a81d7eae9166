using System.CommandLine;
using System.Globalization;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Bench;
using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Deployment;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq cluster`: the demo run command. A temporary cluster of replica processes of this executable,
/// a demo client load, and a live line of ordered requests/s and latency; Ctrl-C stops everything.
/// </summary>
internal static class ClusterCommand
{
    public static Command Build()
    {
        var replicas = new Option<int>("--replicas") { Description = "Replica processes (3f+1).", DefaultValueFactory = _ => 4 };
        var clients = new Option<int>("--clients") { Description = "Demo clients.", DefaultValueFactory = _ => 2 };
        var rate = new Option<double>("--rate") { Description = "Demo load in requests/s (0 = saturate).", DefaultValueFactory = _ => 1000 };
        var payload = new Option<int>("--payload") { Description = "Demo payload bytes.", DefaultValueFactory = _ => 256 };
        var durability = new Option<bool>("--durability") { Description = "Turn on the replicas' write-ahead log." };
        var cmd = new Command("cluster", "Run a local replica cluster with a demo load and a live throughput line (Ctrl-C stops).")
        {
            replicas, clients, rate, payload, durability,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            ClusterSupport.PreferInlineSocketCompletions();
            var n = parse.GetValue(replicas);
            var dir = Directory.CreateTempSubdirectory("sieveq-cluster-").FullName;
            using var logs = ClusterSupport.CreateLogging(LogLevel.Warning);
            try
            {
                var cluster = ClusterBootstrap.Create(dir, n, parse.GetValue(clients), PortPlan.FindFreeBlock(n), new ReplicaConfig { N = n }, parse.GetValue(durability));
                var configPath = Path.Combine(dir, ClusterBootstrap.ConfigFileName);
                await using var procs = new ClusterProcesses(cluster, configPath);
                Console.WriteLine($"cluster config {configPath}");
                foreach (var r in cluster.Replicas)
                {
                    var p = procs.Start(r.Id);
                    Console.WriteLine($"  replica {r.Id}: {r.Endpoint} (pid {p.Id}, log {Path.Combine(dir, $"replica-{r.Id}.log")})");
                }
                if (!await procs.WaitMeshAsync(Enumerable.Range(0, n), TimeSpan.FromSeconds(30), ct).ConfigureAwait(false))
                {
                    Console.Error.WriteLine("replicas did not connect to each other; see their logs");
                    return 1;
                }
                var bftClients = cluster.Clients.Select(c => new BftClient(cluster, c.Id, ClusterBootstrap.LoadKey(cluster, c.Id), new BftClientOptions { Window = 64 }, logs)).ToList();
                try
                {
                    var r = parse.GetValue(rate);
                    Console.WriteLine($"demo load: {bftClients.Count} clients, {(r > 0 ? $"{r:F0} req/s" : "saturating")}, {parse.GetValue(payload)} B payloads. Ctrl-C to stop.");
                    await LoadGenerator.RunForeverAsync(bftClients, new LoadOptions { PayloadBytes = parse.GetValue(payload), OutstandingPerClient = 32, RatePerSecond = r > 0 ? r : null }, sample =>
                    {
                        var st = procs.Status(0);
                        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                            $"t={sample.Seconds,5:F0}s  ordered {sample.RequestsPerSecond,8:F0} req/s  p50 {sample.Latency.P50Ms,6:F2} ms  p99 {sample.Latency.P99Ms,6:F2} ms  regency {st?.Regency} leader {st?.Leader} decided {st?.LastDecided}"));
                    }, ct).ConfigureAwait(false);
                }
                finally
                {
                    foreach (var c in bftClients)
                    {
                        await c.DisposeAsync().ConfigureAwait(false);
                    }
                }
                Console.WriteLine("stopping replicas");
                return 0;
            }
            finally
            {
                try
                {
                    Directory.Delete(dir, recursive: true);
                }
                catch (IOException)
                {
                    // leave it for the OS temp cleaner
                }
            }
        });
        return cmd;
    }
}
