using SieveQ.Bft.Simulation.Faults;

namespace SieveQ.Bft.Simulation;

/// <summary>Runs one seed to the end and reports whether every invariant held.</summary>
public static class SimulationRun
{
    public static string ReplayCommand(ulong seed, string faults, int replicas) =>
        $"dotnet run --project service/SieveQ.Cli -c Release -- sim --seed {seed} --faults {faults} --replicas {replicas} --verbose";

    /// <param name="log">Receives a readable trace of the run (plan, regency changes, decisions, faults); null for none.</param>
    public static SimulationResult Execute(ulong seed, FaultProfile faults, int replicas = 4, TextWriter? log = null) =>
        Execute(seed, faults, replicas, log, checkRequestProofs: true);

    internal static SimulationResult Execute(ulong seed, FaultProfile faults, int replicas, TextWriter? log, bool checkRequestProofs)
    {
        ArgumentNullException.ThrowIfNull(faults);
        var sim = new ClusterSimulation(seed, faults, replicas, log, checkRequestProofs);
        sim.Run();
        var failure = sim.Checker.Failure ?? (sim.LivenessFailure is { } l ? $"liveness violated: {l}" : null);
        var stats = new SimulationStats
        {
            SimulatedMs = sim.Now,
            Steps = sim.Steps,
            DecidedInstances = sim.Checker.HighestDecided,
            ExecutedRequests = sim.Checker.ExecutedRequests,
            SubmittedRequests = sim.Plan.TotalRequests,
            RegencyChanges = sim.Replicas.Where(r => r.IsCorrect && r.Core is not null).Select(r => r.Core!.Regency).DefaultIfEmpty(0).Max(),
            MessagesSent = sim.Stats["net.sent"],
            Counters = sim.Stats.Snapshot(),
            CoreCounters = sim.CorrectCoreCounters().Snapshot(),
            MaxDiskRecords = sim.Replicas.Max(r => r.Disk.MaxCount),
            ByzantineReplicas = sim.Plan.Byzantine.Select(b => b.Replica).Order().ToArray(),
            CrashedReplicas = sim.Plan.Crashes.Select(c => c.Replica).Distinct().Order().ToArray(),
            LaggingAtEnd = sim.Replicas.Count(r => r.IsCorrect && (r.Core?.LastDecided ?? 0) < sim.Checker.HighestDecided),
        };
        var text = failure is null
            ? null
            : $"seed {seed} (faults {faults.Name}, n={replicas}): {failure}{Environment.NewLine}  replay: {ReplayCommand(seed, faults.Name, replicas)}";
        return new SimulationResult(seed, faults.Name, replicas, failure is null, text, stats, sim.Trace.Value);
    }
}
