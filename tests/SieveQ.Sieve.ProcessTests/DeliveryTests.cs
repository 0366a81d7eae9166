using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>The whole sieve as processes on loopback, fault-free and with a component lying or dying.</summary>
public sealed class DeliveryTests(ITestOutputHelper output)
{
    private const int PerSender = 5_000;
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(120);
    private static readonly Dictionary<int, int> Expected = new() { [1] = PerSender, [2] = PerSender };

    [Fact]
    public async Task Ten_thousand_messages_from_two_senders_are_delivered_exactly_once_in_order()
    {
        await using var d = await SieveDeployment.StartAsync();
        var (log, _, _) = await TwoSenderRun.RunAsync(d, output, PerSender, Bound);
        log.AssertExactlyOnceInOrder(Expected);
        d.Passed = true;
    }

    /// <summary>
    /// Replica 3 alters every body it sends after computing the agreed digest. When it is the designated
    /// replica of a batch, the receiver's vote on digests exposes the lie and it fetches the body from
    /// another replica; nothing it sends is delivered.
    /// </summary>
    [Fact]
    public async Task A_replica_sending_corrupted_bodies_changes_nothing_the_receiver_delivers()
    {
        var liar = new CorruptingReplicaSq();
        await using var d = await SieveDeployment.StartAsync(compromisedReplicas: new Dictionary<int, SieveQ.ReplicaSq.IOutputBodyStage> { [3] = liar });
        var (log, _, r) = await TwoSenderRun.RunAsync(d, output, PerSender, Bound);
        Assert.True(liar.Applied > 0, "replica 3 should have streamed corrupted bodies");
        Assert.True(r.Stats.FetchesSent > 0, "the receiver should have fetched bodies the lying replica was designated for");
        Assert.True(r.Stats.FetchesAnswered > 0);
        log.AssertExactlyOnceInOrder(Expected);
        d.Passed = true;
    }
}
