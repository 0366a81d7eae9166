using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>
/// What a STOP carries: the timed-out requests, within a byte budget, each once for a wish. Repeating
/// every timed-out request in every repeated STOP to every peer filled the replicas' send queues under a backlog
/// (frames of about 1 MB, hundreds of MB sent) and the regency change never completed.
/// </summary>
public class StopCarriedRequestsTests
{
    private const int RequestBytes = 4_000;

    [Fact]
    public void Each_timed_out_request_is_carried_once_per_wish_within_the_byte_budget()
    {
        var c = new MiniCluster(new ReplicaConfig { MaxStopCarriedBytes = 10_000 });
        // Two of four silent: no quorum, so the survivors' wish for regency 1 stays pending and their STOP repeats.
        c.Silenced.Add(0);
        c.Silenced.Add(2);
        for (var i = 0; i < 20; i++)
        {
            c.Submit(1000, new byte[RequestBytes]);
        }
        c.Run(10_000);

        var stops = c.Emitted[1].OfType<SendToReplicas>().Select(b => b.Message).OfType<Stop>().ToList();
        Assert.True(stops.Count >= 12, $"only {stops.Count} STOPs: the wish should have been repeated");
        // As many as fit in 10,000 bytes: two of 4,000.
        Assert.All(stops, s => Assert.InRange(s.TimedOut.Count, 0, 2));
        foreach (var wish in stops.GroupBy(s => s.NewRegency))
        {
            var carried = wish.SelectMany(s => s.TimedOut).Select(r => r.Id).ToList();
            Assert.Equal(carried.Count, carried.Distinct().Count());
        }
        // Every request timed out and was carried by some STOP: nothing is left out by the budget, only spread.
        Assert.Equal(20, stops.SelectMany(s => s.TimedOut).Select(r => r.Id).Distinct().Count());
        Assert.True(stops.Count(s => s.TimedOut.Count == 0) >= 1, "once all were carried, a repeated STOP carries none");
        Assert.True(c.Replicas[1]!.Counters["stop.carried-cut"] >= 1);
    }

    [Fact]
    public void A_request_above_the_budget_is_still_carried_alone()
    {
        var c = new MiniCluster(new ReplicaConfig { MaxStopCarriedBytes = 1_000 });
        c.Silenced.Add(0);
        c.Silenced.Add(2);
        c.Submit(1000, new byte[RequestBytes]);
        c.Submit(1000, new byte[RequestBytes]);
        c.Run(4_000);

        var carrying = c.Emitted[1].OfType<SendToReplicas>().Select(b => b.Message).OfType<Stop>().Where(s => s.TimedOut.Count > 0).ToList();
        Assert.True(carrying.Count >= 2);
        Assert.All(carrying, s => Assert.Single(s.TimedOut));
    }

    [Fact]
    public void The_budget_must_be_positive()
    {
        Assert.Throws<ArgumentException>(() => new ReplicaConfig { MaxStopCarriedBytes = 0 }.Validate());
    }
}
