using SieveQ.Bft.Simulation.Faults;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Tests.Simulation;

public class FaultPlanTests
{
    [Theory]
    [InlineData("all", 4)]
    [InlineData("all", 7)]
    [InlineData("byzantine", 10)]
    public void Plans_never_make_more_than_f_replicas_byzantine_and_heal_before_the_deadline(string faults, int replicas)
    {
        var profile = FaultProfile.Parse(faults);
        for (ulong seed = 1; seed <= 300; seed++)
        {
            var plan = FaultPlanner.Create(new SimRandom(seed), profile, replicas);
            Assert.InRange(plan.Byzantine.Count, 0, plan.Config.F);
            Assert.DoesNotContain(plan.Crashes, c => plan.IsByzantine(c.Replica));
            Assert.All(plan.Crashes, c => Assert.InRange(c.RestartAt, c.CrashAt, plan.HealAt));
            Assert.All(plan.Partitions, p => Assert.True(p.End <= plan.HealAt));
            Assert.True(plan.LivenessDeadline >= plan.HealAt + FaultPlanner.LivenessWindowMs);
        }
    }

    [Fact]
    public void Profiles_parse_families_and_single_behaviours()
    {
        var all = FaultProfile.Parse("all");
        Assert.True(all.Network && all.Crash);
        Assert.Equal(ByzantineKindNames.All.Count, all.Byzantine.Count);

        var none = FaultProfile.Parse("none");
        Assert.False(none.Any);

        var mixed = FaultProfile.Parse("equivocate, network,bad-timestamps");
        Assert.True(mixed.Network);
        Assert.False(mixed.Crash);
        Assert.Equal([ByzantineKind.Equivocate, ByzantineKind.BadTimestamps], mixed.Byzantine);
        Assert.Equal("equivocate,network,bad-timestamps", mixed.Name);

        Assert.Throws<ArgumentException>(() => FaultProfile.Parse("gremlins"));
    }

    [Fact]
    public void Power_loss_strikes_every_seed_alone_and_a_fixed_share_of_crash_and_all_seeds()
    {
        var alone = FaultProfile.Parse("power-loss");
        Assert.False(alone.Crash);
        for (ulong seed = 1; seed <= 50; seed++)
        {
            var plan = FaultPlanner.Create(new SimRandom(seed), alone, 4, seed);
            var loss = Assert.Single(plan.PowerLosses.Take(1));
            Assert.Equal(4, loss.RestartDelays.Count);
            Assert.All(plan.PowerLosses, p => Assert.True(p.ArmedAt + p.RestartDelays.Max() <= plan.HealAt));
        }
        foreach (var name in new[] { "crash", "all" })
        {
            var profile = FaultProfile.Parse(name);
            var with = Enumerable.Range(1, 800).Select(i => (ulong)i)
                .Count(seed => FaultPlanner.Create(new SimRandom(seed), profile, 4, seed).PowerLosses.Count > 0);
            Assert.Equal(800 / FaultProfile.PowerLossShareInCrash, with);
        }
        Assert.Empty(FaultPlanner.Create(new SimRandom(8), FaultProfile.Parse("network"), 4, 8).PowerLosses);
    }

    [Fact]
    public void Single_behaviour_plans_always_have_a_byzantine_replica_with_that_behaviour()
    {
        foreach (var kind in ByzantineKindNames.All)
        {
            var plan = FaultPlanner.Create(new SimRandom(5), FaultProfile.Parse(kind.Name()), 4);
            var b = Assert.Single(plan.Byzantine);
            Assert.Equal([kind], b.Kinds);
        }
    }
}
