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
        var log = await RunAsync(d);
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
        await using var d = await SieveDeployment.StartAsync(new() { ReplicaFaults = new Dictionary<int, string> { [3] = "corrupt-bodies" } });
        var log = await RunAsync(d, r =>
        {
            output.WriteLine($"receiver: {r.Stats}");
            Assert.True(r.Stats.FetchesSent > 0, "the receiver should have fetched bodies the lying replica was designated for");
            Assert.True(r.Stats.FetchesAnswered > 0);
        });
        log.AssertExactlyOnceInOrder(Expected);
        d.Passed = true;
    }

    private async Task<DeliveryLog> RunAsync(SieveDeployment d, Action<Sdk.Receiver.SieveQReceiver>? check = null)
    {
        output.WriteLine($"deployment in {d.Directory}");
        var receiver = d.Receiver();
        var log = new DeliveryLog();
        var reading = log.ReadUntilAsync(receiver, Expected, Bound);
        var s1 = d.Sender(1);
        var s2 = d.Sender(2);
        using var progress = new ProgressLines(output, () => $"delivered {log.Count}; sender 1 {s1.Stats}; sender 2 {s2.Stats}; receiver {receiver.Stats}" + (Environment.GetEnvironmentVariable("SIEVEQ_TEST_DIAG") == "1" ? "\n" + d.DescribeAsync().GetAwaiter().GetResult() : ""));
        try
        {
            await Task.WhenAll(Traffic.SendAsync(s1, PerSender, Bound), Traffic.SendAsync(s2, PerSender, Bound));
            await reading;
        }
        catch (OperationCanceledException)
        {
            output.WriteLine(await d.DescribeAsync());
            throw;
        }
        output.WriteLine($"delivered {log.Count}; sender 1 {s1.Stats}; sender 2 {s2.Stats}");
        check?.Invoke(receiver);
        return log;
    }
}
