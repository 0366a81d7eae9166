using SieveQ.Bft.Core;

namespace SieveQ.Bft.Tests.Core;

/// <summary>
/// The application gives its outputs back from Execute and the core hands them out with the decision they
/// belong to (as etcd's raft hands committed entries out in Ready); the application never sends anything itself.
/// </summary>
public class ApplicationOutputTests
{
    [Fact]
    public void Each_decisions_outputs_come_out_of_the_core_with_that_decision_in_order_after_its_decision_record()
    {
        var c = new MiniCluster();
        for (var i = 0; i < 30; i++)
        {
            c.Submit(1000 + (i % 3), [(byte)i]);
            c.Run(20);
        }
        c.Run(2_000);

        for (var r = 0; r < c.Config.N; r++)
        {
            var emitted = c.Emitted[r];
            var outputs = emitted.OfType<ApplicationOutputs>().ToList();
            Assert.Equal(30, outputs.Sum(o => ((ChainOutputs)o.Outputs).Executed.Count));
            // One per decision that executed something, in decision order, each carrying its own instance.
            Assert.All(outputs, o => Assert.Equal(o.ConsensusId, ((ChainOutputs)o.Outputs).ConsensusId));
            Assert.Equal(outputs.Select(o => o.ConsensusId).Order(), outputs.Select(o => o.ConsensusId));
            Assert.Equal(outputs.Count, outputs.Select(o => o.ConsensusId).Distinct().Count());
            foreach (var o in outputs)
            {
                // Between the decision's record and its Decided: after what must be persisted first, with the decision.
                var at = emitted.IndexOf(o);
                var record = emitted.FindLastIndex(at, x => x is Persist { Record: DecisionRecord });
                var decided = emitted.FindIndex(at, x => x is Decided);
                Assert.True(record >= 0 && ((DecisionRecord)((Persist)emitted[record]).Record).ConsensusId == o.ConsensusId);
                Assert.True(decided > at && ((Decided)emitted[decided]).ConsensusId == o.ConsensusId);
                Assert.Equal(((Decided)emitted[decided]).Value.Requests.Select(q => q.Id), ((ChainOutputs)o.Outputs).Executed);
            }
        }
        // Every replica hands out the same outputs for the same decisions.
        var first = c.Emitted[0].OfType<ApplicationOutputs>().Select(Describe).ToList();
        Assert.All(c.Emitted, e => Assert.Equal(first, e.OfType<ApplicationOutputs>().Select(Describe)));
    }

    [Fact]
    public void A_decision_that_executes_nothing_new_has_no_outputs()
    {
        var c = new MiniCluster();
        c.Run(3_000);
        Assert.All(c.Emitted, e => Assert.Empty(e.OfType<ApplicationOutputs>()));
    }

    [Fact]
    public void A_replica_restarted_from_its_log_hands_out_the_outputs_of_the_executions_it_replays_and_nothing_else()
    {
        var c = new MiniCluster();
        for (var i = 0; i < 5; i++)
        {
            c.Submit(1000, [(byte)i]);
            c.Run(50);
        }
        c.Run(1_000);
        var before = c.Emitted[2].OfType<ApplicationOutputs>().Select(Describe).ToList();
        Assert.NotEmpty(before);

        c.Crash(2);
        c.Restart(2);
        var replayed = c.Replicas[2]!.DrainOutputs();

        // Replay sends nothing and persists nothing again, but the rebuilt application's outputs are owed.
        Assert.All(replayed, o => Assert.IsType<ApplicationOutputs>(o));
        Assert.Equal(before, replayed.Cast<ApplicationOutputs>().Select(Describe));
    }

    private static string Describe(ApplicationOutputs o)
    {
        var chain = (ChainOutputs)o.Outputs;
        return $"{o.ConsensusId}/{chain.ConsensusId}: {string.Join(",", chain.Executed)} -> {chain.Head}";
    }
}
