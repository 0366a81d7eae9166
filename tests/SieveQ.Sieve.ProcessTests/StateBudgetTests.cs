using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A receiver away while its sender goes on: the replicas take what the receiver's byte budget holds and refuse the
/// rest untaken, the whole cluster is killed and restarted, and the receiver, back, gets every message exactly once
/// and in order: what was taken from the replicas' recovered state, the rest from the sender's retransmissions.
/// </summary>
public sealed class StateBudgetTests(ITestOutputHelper output)
{
    private const int Count = 120;
    private const int Size = 16 * 1024;  // 120 x 16 KiB: about twice what the receiver's queue budget below holds
    private static readonly long QueueBudget = SieveQ.Sieve.Replica.ReplicaSieveOptions.ChargedBytes(SieveQ.Sieve.Envelope.EnvelopeLimits.MaxDataBytes);
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(150);

    [Fact]
    public async Task A_receiver_queue_filled_while_the_receiver_is_away_survives_a_whole_cluster_restart_and_nothing_is_lost()
    {
        // The smallest budget the options allow (one largest message), so the test fills it with little traffic.
        await using var d = await SieveDeployment.StartAsync(sieve: new() { ReceiverQueueBytes = QueueBudget, QueuedBytesTotal = QueueBudget });
        output.WriteLine($"deployment in {d.Directory}");
        var sender = d.Sender(1);
        long last = 0;
        for (var i = 0; i < Count; i++)
        {
            last = await sender.SendAsync(SieveDeployment.ReceiverId, Traffic.Payload(1, i, Size));
        }

        // Wait until the replicas' queue for the receiver is as full as its budget allows and they refuse the rest.
        var deadline = DateTime.UtcNow + Bound;
        long queued;
        while (true)
        {
            var h = await d.ReplicaHealthAsync(0);
            queued = h.Counters.GetValueOrDefault($"queue_bytes.{SieveDeployment.ReceiverId}");
            if (h.Counters.GetValueOrDefault("drop.ReplicaAdmission.ReceiverQueueFull") > 0 && queued > QueueBudget - (2 * (Size + 64)))
            {
                break;
            }
            Assert.True(DateTime.UtcNow < deadline, $"the queue did not fill: {await d.DescribeAsync()}");
            await Task.Delay(200);
        }
        Assert.True(queued <= QueueBudget, $"queue_bytes {queued} above the budget of {QueueBudget}");
        output.WriteLine($"queue full at {queued} bytes; killing every replica");

        foreach (var r in d.Config.Replicas)
        {
            await d.KillReplicaAsync(r.Id);
        }
        await d.RestartReplicasAsync(d.Config.Replicas.Select(r => r.Id), TimeSpan.FromSeconds(60));
        // Each replica recovers what its own log holds; a decision executed a moment before the kill may not
        // have reached the log yet and is decided again from the prepared certificates, so the queue is
        // awaited rather than read once.
        var recovered = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        foreach (var r in d.Config.Replicas)
        {
            long after;
            while ((after = (await d.ReplicaHealthAsync(r.Id)).Counters.GetValueOrDefault($"queue_bytes.{SieveDeployment.ReceiverId}")) != queued)
            {
                Assert.True(DateTime.UtcNow < recovered, $"replica-SQ {r.Id}: queue_bytes {after} after the restart, {queued} before it: {await d.DescribeAsync()}");
                await Task.Delay(200);
            }
        }

        var receiver = d.Receiver();
        var log = new DeliveryLog();
        using var progress = new ProgressLines(output, () => $"delivered {log.Count}; {sender.Stats}; {receiver.Stats}");
        await log.ReadUntilAsync(receiver, new Dictionary<int, int> { [1] = Count }, Bound, commitEvery: 16);
        log.AssertExactlyOnceInOrder(new Dictionary<int, int> { [1] = Count });
        using var cts = new CancellationTokenSource(Bound);
        await sender.WaitAcknowledgedAsync(last, cts.Token);
        d.Passed = true;
    }
}
