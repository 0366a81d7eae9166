using SieveQ.Bft.Simulation;
using SieveQ.Bft.Simulation.Faults;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Tests.Simulation;

/// <summary>A seed is only useful if it replays: the same seed must give the same run, event for event.</summary>
public class DeterminismTests
{
    [Theory]
    [InlineData(7UL, "all", 4)]
    [InlineData(11UL, "all", 7)]
    [InlineData(3UL, "byzantine", 4)]
    public void Same_seed_gives_the_same_trace(ulong seed, string faults, int replicas)
    {
        var a = SimulationRun.Execute(seed, FaultProfile.Parse(faults), replicas);
        var b = SimulationRun.Execute(seed, FaultProfile.Parse(faults), replicas);
        Assert.Equal(a.TraceHash, b.TraceHash);
        Assert.Equal(a.Stats.Steps, b.Stats.Steps);
        Assert.Equal(a.Stats.SimulatedMs, b.Stats.SimulatedMs);
        Assert.Equal(a.Stats.Counters, b.Stats.Counters);
    }

    [Fact]
    public void Different_seeds_give_different_traces()
    {
        var hashes = SimulationAssert.Seeds(1, 8).Select(s => SimulationRun.Execute(s, FaultProfile.All, 4).TraceHash).ToHashSet();
        Assert.Equal(8, hashes.Count);
    }

    [Fact]
    public void Random_stream_is_fixed_by_its_seed()
    {
        var a = new SimRandom(42);
        var b = new SimRandom(42);
        var first = Enumerable.Range(0, 100).Select(_ => a.NextU64()).ToArray();
        Assert.Equal(first, Enumerable.Range(0, 100).Select(_ => b.NextU64()).ToArray());
        Assert.NotEqual(first, Enumerable.Range(0, 100).Select(_ => new SimRandom(43).NextU64()).ToArray());
        var r = new SimRandom(1);
        Assert.All(Enumerable.Range(0, 1000).Select(_ => r.Range(-3, 3)), v => Assert.InRange(v, -3, 3));
    }

    [Fact]
    public void Failure_text_names_the_seed_and_the_replay_command()
    {
        var cmd = SimulationRun.ReplayCommand(99, "all", 7);
        Assert.Equal("dotnet run --project service/SieveQ.Cli -c Release -- sim --seed 99 --faults all --replicas 7 --verbose", cmd);
    }
}
