using SieveQ.Bft.Simulation;
using SieveQ.Bft.Simulation.Faults;

namespace SieveQ.Bft.Tests.Simulation;

/// <summary>Runs a range of seeds and fails with every broken seed's text and replay command.</summary>
internal static class SimulationAssert
{
    public static List<SimulationResult> AllPass(string faults, int replicas, IEnumerable<ulong> seeds)
    {
        var profile = FaultProfile.Parse(faults);
        var results = seeds.AsParallel().AsOrdered().Select(s => SimulationRun.Execute(s, profile, replicas)).ToList();
        var failures = results.Where(r => !r.Passed).Select(r => r.Failure).ToList();
        Assert.True(failures.Count == 0, string.Join(Environment.NewLine, failures));
        return results;
    }

    public static IEnumerable<ulong> Seeds(ulong first, int count) => Enumerable.Range(0, count).Select(i => first + (ulong)i);

    public static long Sum(this IEnumerable<SimulationResult> results, Func<SimulationStats, long> pick) => results.Sum(r => pick(r.Stats));
}
