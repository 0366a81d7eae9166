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
