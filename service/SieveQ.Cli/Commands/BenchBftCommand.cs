using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Bench;
using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Deployment;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq bench bft`: n replica processes plus load clients on loopback, then the unreplicated single node
/// under the same load, in one run; prints ordered requests/s, latency percentiles, the ratio, and a
/// per-stage CPU profile of the replicas.
/// </summary>
internal static class BenchBftCommand
{
    private sealed record Settings(int Replicas, int Payload, TimeSpan Duration, TimeSpan Warmup, int Clients, int Outstanding,
        bool ClosedLoop, double? Rate, bool Durability, int Batch, bool Baseline);

    public static Command Build()
    {
        var replicas = new Option<int>("--replicas") { Description = "Replica processes (3f+1).", DefaultValueFactory = _ => 4 };
        var payload = new Option<int>("--payload") { Description = "Request payload bytes (0, 100, 500, 1024, ...).", DefaultValueFactory = _ => 1024 };
        var duration = new Option<string>("--duration") { Description = "Measured time per phase, e.g. 20s.", DefaultValueFactory = _ => "20s" };
        var warmup = new Option<string>("--warmup") { Description = "Unmeasured warm-up per phase.", DefaultValueFactory = _ => "5s" };
        var clients = new Option<int?>("--clients") { Description = "Client connections (default 8, or 16 with --closed-loop)." };
        var outstanding = new Option<int?>("--outstanding") { Description = "Requests each client keeps in flight (default 128, or 1 with --closed-loop)." };
        var closedLoop = new Option<bool>("--closed-loop") { Description = "One outstanding request per client, like BFT-SMaRt's microbenchmark." };
        var rate = new Option<double?>("--rate") { Description = "Open loop: offer this many requests/s in total instead of saturating (for latency at a given load)." };
        var json = new Option<FileInfo?>("--json") { Description = "Write the figures as JSON to this file." };
        var durability = new Option<bool>("--durability") { Description = "Replicas fsync their write-ahead log before acting on decisions." };
        var batch = new Option<int>("--batch") { Description = "Largest batch the leader proposes.", DefaultValueFactory = _ => 1024 };
        var noBaseline = new Option<bool>("--no-baseline") { Description = "Skip the unreplicated phase." };
        var cmd = new Command("bft", "Benchmark the BFT ordering on loopback against an unreplicated baseline.")
        {
            replicas, payload, duration, warmup, clients, outstanding, closedLoop, rate, json, durability, batch, noBaseline,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            ClusterSupport.PreferInlineSocketCompletions();
            var closed = parse.GetValue(closedLoop);
            var s = new Settings(parse.GetValue(replicas), parse.GetValue(payload), ClusterSupport.ParseDuration(parse.GetValue(duration)!),
                ClusterSupport.ParseDuration(parse.GetValue(warmup)!), parse.GetValue(clients) ?? (closed ? 16 : 8),
                parse.GetValue(outstanding) ?? (closed ? 1 : 128), closed, parse.GetValue(rate), parse.GetValue(durability),
                parse.GetValue(batch), !parse.GetValue(noBaseline));
            return await RunAsync(s, parse.GetValue(json), ct).ConfigureAwait(false);
        });
        return cmd;
    }

    private static async Task<int> RunAsync(Settings s, FileInfo? json, CancellationToken ct)
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-bench-").FullName;
        using var logs = ClusterSupport.CreateLogging(LogLevel.Warning);
        try
        {
            var protocol = new ReplicaConfig { N = s.Replicas, MaxBatchRequests = s.Batch };
            var cluster = ClusterBootstrap.Create(dir, s.Replicas, s.Clients, PortPlan.FindFreeBlock(s.Replicas), protocol, s.Durability);
            var configPath = Path.Combine(dir, ClusterBootstrap.ConfigFileName);
            var mode = s.Rate is { } r ? $"open loop at {r:F0} req/s" : $"{s.Clients} clients x {s.Outstanding} outstanding{(s.ClosedLoop ? " (closed loop)" : "")}";
            Console.WriteLine($"bench bft: n={s.Replicas} f={cluster.Protocol.F}, payload {s.Payload} B, {mode}, warm-up {s.Warmup.TotalSeconds:F0}s + {s.Duration.TotalSeconds:F0}s, durability {(s.Durability ? "on" : "off")}, batch <= {s.Batch}");
            Console.WriteLine($"cluster files in {dir}");

            var replicated = await ReplicatedPhaseAsync(s, cluster, configPath, logs, ct).ConfigureAwait(false);
            Print("replicated", replicated);
            PhaseResult? baseline = null;
            if (s.Baseline)
            {
                baseline = await BaselinePhaseAsync(s, cluster, configPath, logs, ct).ConfigureAwait(false);
                Print("unreplicated", baseline);
            }
            var ratio = baseline is { Load.RequestsPerSecond: > 0 } ? replicated.Load.RequestsPerSecond / baseline.Load.RequestsPerSecond : double.NaN;
            if (baseline is not null)
            {
                Console.WriteLine($"ratio replicated/unreplicated: {ratio:F3}");
            }
            PrintProfile(replicated);
            if (json is not null)
            {
                var doc = new
                {
                    replicas = s.Replicas,
                    payloadBytes = s.Payload,
                    clients = s.Clients,
                    outstandingPerClient = s.Outstanding,
                    closedLoop = s.ClosedLoop,
                    offeredRate = s.Rate,
                    durability = s.Durability,
                    maxBatch = s.Batch,
                    warmupSeconds = s.Warmup.TotalSeconds,
                    replicated = Figures(replicated),
                    unreplicated = baseline is null ? null : Figures(baseline),
                    ratio = double.IsNaN(ratio) ? (double?)null : ratio,
                };
                await File.WriteAllTextAsync(json.FullName, JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true }), ct).ConfigureAwait(false);
                Console.WriteLine($"wrote {json.FullName}");
            }
            return replicated.Load.Completed > 0 ? 0 : 1;
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
    }

    private sealed record PhaseResult(LoadResult Load, double ClientCpuMs, double WallMs, IReadOnlyList<ReplicaStatus> Before, IReadOnlyList<ReplicaStatus> After);

    private static object Figures(PhaseResult p) => new
    {
        requestsPerSecond = Math.Round(p.Load.RequestsPerSecond, 1),
        completed = p.Load.Completed,
        seconds = Math.Round(p.Load.Seconds, 3),
        latencyMs = new { p50 = p.Load.Latency.P50Ms, p99 = p.Load.Latency.P99Ms, mean = Math.Round(p.Load.Latency.MeanMs, 3), max = p.Load.Latency.MaxMs },
        retransmissions = p.Load.Retransmissions,
        clientCpuPercentOfCore = Math.Round(100 * p.ClientCpuMs / p.WallMs, 1),
        replicas = p.After.Select((a, i) => new
        {
            id = a.Id,
            leader = a.Leader == a.Id,
            cpuPercentOfCore = Math.Round(100 * (a.CpuMs - p.Before[i].CpuMs) / p.WallMs, 1),
            cpuMicrosPerRequest = a.ExecutedRequests > p.Before[i].ExecutedRequests
                ? Math.Round(1000 * (a.CpuMs - p.Before[i].CpuMs) / (a.ExecutedRequests - p.Before[i].ExecutedRequests), 1) : (double?)null,
            gcPauseMs = Math.Round(a.GcPauseMs - p.Before[i].GcPauseMs, 0),
            decidedInstances = a.DecidedInstances - p.Before[i].DecidedInstances,
            executedRequests = a.ExecutedRequests - p.Before[i].ExecutedRequests,
            stagesMs = a.Stages.ToDictionary(kv => kv.Key, kv => Math.Round(kv.Value.Milliseconds - p.Before[i].Stages.GetValueOrDefault(kv.Key).Milliseconds, 1)),
        }).ToList(),
    };

    private static async Task<PhaseResult> ReplicatedPhaseAsync(Settings s, ClusterConfig cluster, string configPath, ILoggerFactory logs, CancellationToken ct)
    {
        await using var procs = new ClusterProcesses(cluster, configPath);
        for (var i = 0; i < s.Replicas; i++)
        {
            procs.Start(i);
        }
        var ids = Enumerable.Range(0, s.Replicas).ToList();
        if (!await procs.WaitMeshAsync(ids, TimeSpan.FromSeconds(30), ct).ConfigureAwait(false))
        {
            throw new InvalidOperationException($"replicas did not connect; see the replica-*.log files in {cluster.BaseDirectory}");
        }
        var clients = new List<BftClient>();
        try
        {
            foreach (var c in cluster.Clients)
            {
                clients.Add(new BftClient(cluster, c.Id, ClusterBootstrap.LoadKey(cluster, c.Id), new BftClientOptions { Window = Math.Max(1, s.Outstanding) }, logs));
            }
            foreach (var c in clients)
            {
                await c.WaitConnectedAsync(s.Replicas, TimeSpan.FromSeconds(10), ct).ConfigureAwait(false);
            }
            return await MeasureAsync(s, clients, () => ids.Select(id => procs.Status(id) ?? new ReplicaStatus { Id = id }).ToList(), ct).ConfigureAwait(false);
        }
        finally
        {
            foreach (var c in clients)
            {
                await c.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    private static async Task<PhaseResult> BaselinePhaseAsync(Settings s, ClusterConfig cluster, string configPath, ILoggerFactory logs, CancellationToken ct)
    {
        await using var procs = new ClusterProcesses(cluster, configPath);
        procs.Start(0, "--unreplicated");
        var single = new ReplicaConfig { N = 1 } with { };
        var ring = new KeyRing(cluster);
        var clients = new List<BftClient>();
        try
        {
            foreach (var c in cluster.Clients)
            {
                clients.Add(new BftClient(single, [cluster.Replica(0)], cluster.Links, ring, c.Id, ClusterBootstrap.LoadKey(cluster, c.Id), new BftClientOptions { Window = Math.Max(1, s.Outstanding) }, logs));
            }
            foreach (var c in clients)
            {
                if (!await c.WaitConnectedAsync(1, TimeSpan.FromSeconds(20), ct).ConfigureAwait(false))
                {
                    throw new InvalidOperationException("the unreplicated server did not accept connections");
                }
            }
            return await MeasureAsync(s, clients, () => [], ct).ConfigureAwait(false);
        }
        finally
        {
            foreach (var c in clients)
            {
                await c.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    private static async Task<PhaseResult> MeasureAsync(Settings s, List<BftClient> clients, Func<List<ReplicaStatus>> statuses, CancellationToken ct)
    {
        var me = Process.GetCurrentProcess();
        var before = statuses();
        var cpu0 = me.TotalProcessorTime;
        var wall = Stopwatch.StartNew();
        var options = new LoadOptions
        {
            OutstandingPerClient = s.Outstanding,
            PayloadBytes = s.Payload,
            Warmup = s.Warmup,
            Duration = s.Duration,
            RatePerSecond = s.Rate,
        };
        var load = await LoadGenerator.RunAsync(clients, options, sample =>
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  t={sample.Seconds,5:F0}s  {sample.RequestsPerSecond,9:F0} req/s  p50 {sample.Latency.P50Ms,7:F2} ms  p99 {sample.Latency.P99Ms,7:F2} ms")), ct).ConfigureAwait(false);
        await Task.Delay(300, ct).ConfigureAwait(false);  // let the replicas publish a final status
        me.Refresh();
        var after = statuses();
        return new PhaseResult(load, (me.TotalProcessorTime - cpu0).TotalMilliseconds, wall.Elapsed.TotalMilliseconds, before, after);
    }

    private static void Print(string name, PhaseResult p) =>
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{name,-13}: {p.Load.RequestsPerSecond,9:F0} ordered req/s  p50 {p.Load.Latency.P50Ms:F2} ms  p99 {p.Load.Latency.P99Ms:F2} ms  mean {p.Load.Latency.MeanMs:F2} ms  ({p.Load.Completed} in {p.Load.Seconds:F1}s, {p.Load.Retransmissions} retransmissions, client process CPU {100 * p.ClientCpuMs / p.WallMs:F0}% of a core)"));

    private static void PrintProfile(PhaseResult p)
    {
        Console.WriteLine("profile (replicated phase; % of one core over warm-up + measurement):");
        for (var i = 0; i < p.After.Count; i++)
        {
            var a = p.After[i];
            var b = p.Before[i];
            var parts = a.Stages.Select(kv =>
            {
                var ms = kv.Value.Milliseconds - b.Stages.GetValueOrDefault(kv.Key).Milliseconds;
                return string.Create(CultureInfo.InvariantCulture, $"{kv.Key} {100 * ms / p.WallMs:F1}%");
            });
            var batches = a.DecidedInstances - b.DecidedInstances;
            var executed = a.ExecutedRequests - b.ExecutedRequests;
            var cpuPerRequestUs = executed > 0 ? 1000 * (a.CpuMs - b.CpuMs) / executed : 0;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  replica {a.Id}{(a.Leader == a.Id ? " (leader)" : "")}: cpu {100 * (a.CpuMs - b.CpuMs) / p.WallMs:F0}% ({cpuPerRequestUs:F1} us/request), {batches} instances, {(batches > 0 ? (double)executed / batches : 0):F1} req/batch, gc pause {a.GcPauseMs - b.GcPauseMs:F0} ms, gen2 {(a.GcCollections.Count > 2 ? a.GcCollections[2] - (b.GcCollections.Count > 2 ? b.GcCollections[2] : 0) : 0)} | {string.Join(", ", parts)}"));
        }
    }
}
