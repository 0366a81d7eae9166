using System.Collections.Concurrent;
using System.CommandLine;
using System.Diagnostics;
using SieveQ.Bft.Simulation;
using SieveQ.Bft.Simulation.Faults;

namespace SieveQ.Cli.Commands;

/// <summary>`sieveq sim`: runs seeded cluster simulations of the BFT core and reports every seed that broke an invariant.</summary>
internal static class SimCommand
{
    public static Command Build()
    {
        var seeds = new Option<int>("--seeds") { Description = "How many consecutive seeds to run.", DefaultValueFactory = _ => 100 };
        var firstSeed = new Option<ulong>("--first-seed") { Description = "The first seed of the range.", DefaultValueFactory = _ => 1 };
        var seed = new Option<ulong?>("--seed") { Description = "Run this one seed only (use with --verbose to replay a failure)." };
        var faults = new Option<string>("--faults")
        {
            Description = "none | network | crash | power-loss | byzantine | all (crash and all include a whole-cluster power loss on every "
                + $"{FaultProfile.PowerLossShareInCrash}th seed; power-loss alone, on every seed), or a comma list with single behaviours: "
                + string.Join(", ", ByzantineKindNames.All.Select(k => k.Name())),
            DefaultValueFactory = _ => "all",
        };
        var replicas = new Option<int>("--replicas") { Description = "Cluster size n = 3f+1 (4, 7, 10).", DefaultValueFactory = _ => 4 };
        var verbose = new Option<bool>("--verbose") { Description = "Print the fault plan and a trace of the run (single seed), or every seed's figures." };
        var parallel = new Option<int>("--parallel") { Description = "Seeds run at once; defaults to the number of cores.", DefaultValueFactory = _ => Environment.ProcessorCount };

        var cmd = new Command("sim", "Run seeded simulations of the BFT ordering core under network, crash, power-loss and Byzantine faults.");
        foreach (var o in new Option[] { seeds, firstSeed, seed, faults, replicas, verbose, parallel })
        {
            cmd.Options.Add(o);
        }
        cmd.SetAction((ParseResult pr, CancellationToken ct) =>
        {
            FaultProfile profile;
            try
            {
                profile = FaultProfile.Parse(pr.GetValue(faults)!);
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine(e.Message);
                return Task.FromResult(2);
            }
            var n = pr.GetValue(replicas);
            if (n < 4 || (n - 1) % 3 != 0)
            {
                Console.Error.WriteLine($"--replicas must be 3f+1 (4, 7, 10, ...), got {n}");
                return Task.FromResult(2);
            }
            var isVerbose = pr.GetValue(verbose);
            if (pr.GetValue(seed) is { } single)
            {
                return Task.FromResult(RunOne(single, profile, n, isVerbose));
            }
            return Task.FromResult(RunMany(pr.GetValue(firstSeed), pr.GetValue(seeds), profile, n, Math.Max(1, pr.GetValue(parallel)), isVerbose, ct));
        });
        return cmd;
    }

    private static int RunOne(ulong seed, FaultProfile profile, int n, bool verbose)
    {
        var sw = Stopwatch.StartNew();
        var result = SimulationRun.Execute(seed, profile, n, verbose ? Console.Out : null);
        PrintStats(result, sw.Elapsed);
        if (!result.Passed)
        {
            Console.WriteLine(result.Failure);
        }
        Console.WriteLine(result.Passed ? "1 passed, 0 failed" : "0 passed, 1 failed");
        return result.Passed ? 0 : 1;
    }

    private static int RunMany(ulong first, int count, FaultProfile profile, int n, int parallel, bool verbose, CancellationToken ct)
    {
        var sw = Stopwatch.StartNew();
        var failures = new ConcurrentBag<SimulationResult>();
        long passed = 0, simulatedMs = 0, decided = 0, executed = 0, regencies = 0, steps = 0;
        var gate = new object();
        Parallel.For(0, count, new ParallelOptions { MaxDegreeOfParallelism = parallel, CancellationToken = ct }, i =>
        {
            var result = SimulationRun.Execute(first + (ulong)i, profile, n);
            Interlocked.Add(ref simulatedMs, result.Stats.SimulatedMs);
            Interlocked.Add(ref decided, result.Stats.DecidedInstances);
            Interlocked.Add(ref executed, result.Stats.ExecutedRequests);
            Interlocked.Add(ref regencies, result.Stats.RegencyChanges);
            Interlocked.Add(ref steps, result.Stats.Steps);
            if (result.Passed)
            {
                Interlocked.Increment(ref passed);
            }
            else
            {
                failures.Add(result);
            }
            lock (gate)
            {
                if (!result.Passed)
                {
                    Console.WriteLine($"FAIL {result.Failure}");
                }
                else if (verbose)
                {
                    Console.WriteLine($"ok seed {result.Seed}: {result.Stats.SimulatedMs}ms simulated, {result.Stats.DecidedInstances} instances, regency {result.Stats.RegencyChanges}, disk high-water {result.Stats.MaxDiskRecords}, lagging at end {result.Stats.LaggingAtEnd}");
                }
            }
        });
        Console.WriteLine($"{count} seeds, faults {profile.Name}, n={n}: {simulatedMs / 1000.0:F0}s simulated, {steps} events, {decided} instances decided, {executed} requests executed, {regencies} regency changes, wall {sw.Elapsed.TotalSeconds:F1}s");
        Console.WriteLine($"{passed} passed, {failures.Count} failed");
        return failures.IsEmpty ? 0 : 1;
    }

    private static void PrintStats(SimulationResult r, TimeSpan wall)
    {
        var s = r.Stats;
        Console.WriteLine($"seed {r.Seed} faults {r.Faults} n={r.Replicas}: {s.SimulatedMs}ms simulated in {wall.TotalMilliseconds:F0}ms wall, {s.Steps} events, {s.MessagesSent} messages");
        Console.WriteLine($"  decided {s.DecidedInstances} instances, executed {s.ExecutedRequests}/{s.SubmittedRequests} requests, regency reached {s.RegencyChanges}, disk high-water {s.MaxDiskRecords} records, {s.LaggingAtEnd} correct replicas lagging at the end");
        Console.WriteLine($"  host/network/byzantine: {string.Join(", ", s.Counters.Select(kv => $"{kv.Key}={kv.Value}"))}");
        Console.WriteLine($"  correct cores: {string.Join(", ", s.CoreCounters.Select(kv => $"{kv.Key}={kv.Value}"))}");
        Console.WriteLine($"  trace hash {r.TraceHash:x16}");
    }
}
