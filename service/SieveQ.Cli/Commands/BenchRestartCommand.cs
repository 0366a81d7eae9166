using System.CommandLine;
using System.Diagnostics;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Deployment;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq bench restart`: a durable replica cluster under closed-loop load is killed with SIGKILL, all replicas
/// at once, at random points, and restarted, again and again. Reports how long ordering takes to resume after
/// each restart and how many regency changes it needed, next to the cold start of the same cluster measured
/// in the same run (the baseline), and checks that nothing acknowledged was lost and no replica went back.
/// </summary>
internal static class BenchRestartCommand
{
    private sealed record Restart(int Round, long KillAfterMs, double ResumeMs, int RegencyBefore, int RegencyAfter, long AcknowledgedBefore);

    public static Command Build()
    {
        var restarts = new Option<int>("--restarts") { Description = "Whole-cluster kills and restarts.", DefaultValueFactory = _ => 20 };
        var seed = new Option<int?>("--seed") { Description = "Seed for the kill points (printed; random if omitted)." };
        var clients = new Option<int>("--concurrency") { Description = "Requests kept in flight by the load client.", DefaultValueFactory = _ => 8 };
        var json = new Option<FileInfo?>("--json") { Description = "Write the figures as JSON to this file." };
        var cmd = new Command("restart", "Kill every replica at once under load, restart, and measure how fast ordering resumes (against a cold start).")
        {
            restarts, seed, clients, json,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            var n = parse.GetValue(restarts);
            var c = parse.GetValue(clients);
            if (n < 1 || n > 1_000 || c < 1 || c > 1_024)
            {
                Console.Error.WriteLine("--restarts must be 1..1000 and --concurrency 1..1024");
                return 2;
            }
            return await RunAsync(n, parse.GetValue(seed) ?? Random.Shared.Next(), c, parse.GetValue(json), ct).ConfigureAwait(false);
        });
        return cmd;
    }

    private static async Task<int> RunAsync(int rounds, int seed, int concurrency, FileInfo? json, CancellationToken ct)
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-restart-").FullName;
        using var logs = ClusterSupport.CreateLogging(LogLevel.Warning);
        var rng = new Random(seed);
        const int replicas = 4;
        var cluster = ClusterBootstrap.Create(dir, replicas, 1, PortPlan.FindFreeBlock(replicas), new ReplicaConfig { N = replicas }, durability: true);
        var configPath = Path.Combine(dir, ClusterBootstrap.ConfigFileName);
        Console.WriteLine($"bench restart: n={replicas}, durability on, {rounds} whole-cluster SIGKILLs at points drawn from seed {seed}, closed loop x{concurrency}");
        Console.WriteLine($"protocol: request time-out {cluster.Protocol.RequestTimeoutMs} ms, leader silence {cluster.Protocol.LeaderSilenceTimeoutMs} ms, sync time-out {cluster.Protocol.SyncTimeoutMs} ms; files in {dir}");
        var procs = new ClusterProcesses(cluster, configPath);
        var results = new List<Restart>();
        BftClient? client = null;
        var completed = 0L;
        var duplicates = 0;
        var seen = new HashSet<long>();
        using var stop = new CancellationTokenSource();
        var workers = new List<Task>();
        try
        {
            var cold = Stopwatch.StartNew();
            StartAll(procs, replicas);
            client = new BftClient(cluster, cluster.Clients[0].Id, ClusterBootstrap.LoadKey(cluster, cluster.Clients[0].Id), new BftClientOptions { Window = concurrency }, logs);
            for (var i = 0; i < concurrency; i++)
            {
                workers.Add(Task.Run(async () =>
                {
                    var c = client;
                    while (!stop.IsCancellationRequested)
                    {
                        // A submitted request is awaited to the end (the client retransmits across restarts).
                        var done = await c.SubmitAsync(BitConverter.GetBytes(Random.Shared.NextInt64()), CancellationToken.None).ConfigureAwait(false);
                        lock (seen)
                        {
                            if (!seen.Add(done.Sequence))
                            {
                                duplicates++;
                            }
                            completed++;
                        }
                    }
                }, CancellationToken.None));
            }
            await WaitForAsync(() => Interlocked.Read(ref completed) >= 10, TimeSpan.FromSeconds(60), "the first completions after a cold start", ct).ConfigureAwait(false);
            var coldMs = cold.Elapsed.TotalMilliseconds;
            Console.WriteLine($"cold start: ordering {coldMs:F0} ms after the processes were started");

            for (var round = 1; round <= rounds; round++)
            {
                var killAfter = rng.Next(200, 3_000);
                await Task.Delay(killAfter, ct).ConfigureAwait(false);
                var before = Enumerable.Range(0, replicas).Select(procs.Status).ToArray();
                var regencyBefore = before.Max(s => s?.Regency ?? 0);
                foreach (var (_, p) in procs.Children.Where(c => !c.Process.HasExited))
                {
                    p.Kill();
                    await p.WaitForExitAsync(ct).ConfigureAwait(false);
                }
                var sw = Stopwatch.StartNew();
                StartAll(procs, replicas);
                var recovered = await WaitForAsync(() => LiveStatuses(procs, replicas) is { Count: replicas } l ? l : null, TimeSpan.FromSeconds(60), "every replica to report after the restart", ct).ConfigureAwait(false);
                foreach (var s in recovered)
                {
                    if (s.LastDecided < (before[s.Id]?.LastDecided ?? 0))
                    {
                        throw new InvalidOperationException($"replica {s.Id} recovered at instance {s.LastDecided}, below the {before[s.Id]!.LastDecided} it had decided");
                    }
                }
                var acked = Interlocked.Read(ref completed);
                await WaitForAsync(() => Interlocked.Read(ref completed) >= acked + 10, TimeSpan.FromSeconds(120), $"ordering after restart {round}", ct).ConfigureAwait(false);
                var resume = sw.Elapsed.TotalMilliseconds;
                await Task.Delay(250, ct).ConfigureAwait(false);
                var regencyAfter = LiveStatuses(procs, replicas).Select(s => s.Regency).DefaultIfEmpty(regencyBefore).Max();
                results.Add(new Restart(round, killAfter, resume, regencyBefore, regencyAfter, acked));
                Console.WriteLine($"restart {round,3}: killed {killAfter,5} ms into the round; ordering again after {resume,6:F0} ms; regency {regencyBefore} -> {regencyAfter}");
            }
            await stop.CancelAsync().ConfigureAwait(false);
            await Task.WhenAll(workers).WaitAsync(TimeSpan.FromSeconds(60), ct).ConfigureAwait(false);
            var final = await WaitForAsync(() => LiveStatuses(procs, replicas) is { Count: replicas } l && l.All(s => s.AppState == l[0].AppState && s.AppState.StartsWith($"{completed}:", StringComparison.Ordinal)) ? l : null,
                TimeSpan.FromSeconds(60), $"the replicas to agree on a state with {completed} executed requests", ct).ConfigureAwait(false);

            var resumes = results.Select(r => r.ResumeMs).Order().ToArray();
            var changes = results.Select(r => r.RegencyAfter - r.RegencyBefore).Order().ToArray();
            double P(double[] xs, double q) => xs[Math.Min(xs.Length - 1, (int)Math.Floor(q * xs.Length))];
            Console.WriteLine($"resume after a whole-cluster restart: p50 {P(resumes, 0.5):F0} ms  p90 {P(resumes, 0.9):F0} ms  max {resumes[^1]:F0} ms  (cold start {coldMs:F0} ms; ratio p50/cold {P(resumes, 0.5) / coldMs:F2})");
            Console.WriteLine($"regency changes to resume: median {changes[changes.Length / 2]}, max {changes[^1]}");
            Console.WriteLine($"{completed} requests completed, {duplicates} completed twice; replicas agree on {final[0].AppState}");
            if (json is not null)
            {
                var doc = new
                {
                    seed,
                    restarts = rounds,
                    concurrency,
                    coldStartMs = Math.Round(coldMs, 1),
                    resumeMs = new { p50 = Math.Round(P(resumes, 0.5), 1), p90 = Math.Round(P(resumes, 0.9), 1), max = Math.Round(resumes[^1], 1) },
                    ratioP50ToColdStart = Math.Round(P(resumes, 0.5) / coldMs, 3),
                    regencyChanges = new { median = changes[changes.Length / 2], max = changes[^1] },
                    completed,
                    duplicates,
                    rounds = results,
                };
                await File.WriteAllTextAsync(json.FullName, JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true }), ct).ConfigureAwait(false);
                Console.WriteLine($"wrote {json.FullName}");
            }
            return duplicates == 0 ? 0 : 1;
        }
        finally
        {
            await stop.CancelAsync().ConfigureAwait(false);
            if (client is not null)
            {
                await client.DisposeAsync().ConfigureAwait(false);
            }
            await procs.DisposeAsync().ConfigureAwait(false);
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

    private static void StartAll(ClusterProcesses procs, int replicas)
    {
        for (var i = 0; i < replicas; i++)
        {
            procs.Start(i);
        }
    }

    /// <summary>Statuses written by the replica processes running now (a dead one's last file is ignored).</summary>
    private static List<ReplicaStatus> LiveStatuses(ClusterProcesses procs, int replicas)
    {
        var running = procs.Children.Where(c => !c.Process.HasExited).ToDictionary(c => c.Id, c => c.Process.Id);
        return Enumerable.Range(0, replicas)
            .Select(procs.Status)
            .Where(s => s is not null && running.TryGetValue(s.Id, out var pid) && pid == s.Pid)
            .Select(s => s!)
            .ToList();
    }

    private static async Task<T> WaitForAsync<T>(Func<T?> probe, TimeSpan timeout, string what, CancellationToken ct) where T : class
    {
        var sw = Stopwatch.StartNew();
        while (sw.Elapsed < timeout)
        {
            if (probe() is { } v)
            {
                return v;
            }
            await Task.Delay(50, ct).ConfigureAwait(false);
        }
        throw new TimeoutException($"timed out after {timeout.TotalSeconds:F0} s waiting for {what}");
    }

    private static Task WaitForAsync(Func<bool> probe, TimeSpan timeout, string what, CancellationToken ct) =>
        WaitForAsync(() => probe() ? "" : null, timeout, what, ct);
}
