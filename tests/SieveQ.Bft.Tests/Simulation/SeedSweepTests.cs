using SieveQ.Bft.Simulation;

namespace SieveQ.Bft.Tests.Simulation;

/// <summary>
/// A fixed set of seeds per fault family and cluster size. Longer sweeps are a command:
/// `sieveq sim --seeds 2000 --faults all`.
/// </summary>
public class SeedSweepTests
{
    [Theory]
    [InlineData("none", 4, 20)]
    [InlineData("network", 4, 40)]
    [InlineData("crash", 4, 40)]
    [InlineData("power-loss", 4, 60)]
    [InlineData("byzantine", 4, 40)]
    [InlineData("all", 4, 60)]
    [InlineData("none", 7, 10)]
    [InlineData("network", 7, 20)]
    [InlineData("crash", 7, 20)]
    [InlineData("byzantine", 7, 20)]
    [InlineData("all", 7, 30)]
    public void Every_seed_keeps_every_invariant(string faults, int replicas, int seeds)
    {
        var results = SimulationAssert.AllPass(faults, replicas, SimulationAssert.Seeds(1, seeds));
        Assert.All(results, r => Assert.Equal(r.Stats.SubmittedRequests, r.Stats.ExecutedRequests));
    }

    [Fact]
    public void Fault_families_actually_inject_faults()
    {
        var network = SimulationAssert.AllPass("network", 4, SimulationAssert.Seeds(1, 10));
        Assert.True(network.Sum(s => s.Counter("net.lost")) > 0);
        Assert.True(network.Sum(s => s.Counter("net.partitioned")) > 0);
        Assert.True(network.Sum(s => s.Counter("net.duplicated")) > 0);

        var crash = SimulationAssert.AllPass("crash", 4, SimulationAssert.Seeds(1, 10));
        Assert.All(crash, r => Assert.NotEmpty(r.Stats.CrashedReplicas));
        Assert.True(crash.Sum(s => s.Counter("net.to-crashed-replica")) > 0);

        // Decision records are synced lazily: some crashes must lose unsynced ones, and the sweep above
        // must still keep every invariant and execute every request.
        var lost = SimulationAssert.AllPass("crash", 4, SimulationAssert.Seeds(1, 40));
        Assert.True(lost.Sum(s => s.Counter("disk.volatile-records-lost")) > 0, "no crash lost an unsynced decision record");

        // Every power-loss seed takes all correct replicas down at once, and some of them lose unsynced decisions.
        var power = SimulationAssert.AllPass("power-loss", 4, SimulationAssert.Seeds(1, 20));
        Assert.All(power, r => Assert.True(r.Stats.Counter("power-loss.struck") >= 1, $"seed {r.Seed}: no power loss struck"));
        Assert.True(power.Sum(s => s.Counter("disk.volatile-records-lost")) > 0, "no power loss lost an unsynced decision record");

        var none = SimulationAssert.AllPass("none", 4, SimulationAssert.Seeds(1, 5));
        Assert.All(none, r => Assert.Equal(0, r.Stats.RegencyChanges));
    }
}
