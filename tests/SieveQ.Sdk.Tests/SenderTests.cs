using SieveQ.Agent.Hosting;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Sender;
using SieveQ.Sdk.Sender;
using SieveQ.Sdk.Tests.Fakes;

namespace SieveQ.Sdk.Tests;

/// <summary>The SDK's sender-SQ against fake pre-SQs that run the real pre-SQ filter and a cluster of real replica state machines.</summary>
public sealed class SenderTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    private static SieveQSenderOptions Fast(int? initialPreSq = null, int maxOutstanding = 4096, long retransmitAfterMs = 150) => new()
    {
        InitialPreSq = initialPreSq,
        Protocol = new SenderSqOptions
        {
            MaxOutstanding = maxOutstanding,
            RetransmitAfterMs = retransmitAfterMs,
            AckRequestIntervalMs = 20,
            AckResponseWaitMs = 150,
        },
    };

    private static byte[] Payload(int i) => System.Text.Encoding.UTF8.GetBytes($"payload {i}");

    [Fact]
    public async Task Sequence_numbers_never_repeat_across_restarts()
    {
        await using var world = await SieveWorld.StartAsync();
        var seen = new HashSet<long>();
        var lastOfRun = 0L;
        for (var run = 0; run < 3; run++)
        {
            await using var sender = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast());
            for (var i = 0; i < 5; i++)
            {
                var seq = await sender.SendAsync(SieveWorld.Receiver, Payload(i));
                Assert.True(seen.Add(seq), $"sequence number {seq} repeated in run {run}");
                Assert.True(seq > lastOfRun);
                lastOfRun = seq;
            }
        }
    }

    [Fact]
    public async Task Frames_reach_the_pre_sq_with_valid_macs_and_are_acknowledged()
    {
        await using var world = await SieveWorld.StartAsync();
        var preSq = world.PreSqIds[0];
        await using var sender = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast(preSq));
        long last = 0;
        for (var i = 0; i < 40; i++)
        {
            last = await sender.SendAsync(SieveWorld.Receiver, Payload(i));
        }
        await sender.WaitAcknowledgedAsync(last).WaitAsync(Patience);
        Assert.True(sender.AcknowledgedUpTo >= last);
        Assert.True(world.Server.MessagesPassed.GetValueOrDefault(preSq) > 0);
        // The replicas may move the sender to the other pre-SQ if an ACKREQ overtakes messages on a cold start.
        Assert.True(world.Server.MessagesPassed.Values.Sum() >= 40);
        // No frame failed the MAC check (c) anywhere; a retransmission may come back to a pre-SQ as a replay (b).
        foreach (var p in world.PreSqIds)
        {
            Assert.Equal(0, world.Server.DropsAt(p).ByReason(DropReason.BadMac));
            Assert.Equal(0, world.Server.DropsAt(p).Total - world.Server.DropsAt(p).ByReason(DropReason.Replay));
        }
        Assert.True(world.Server.FramesPassed[preSq] > 0);
        Assert.Equal(40, world.Cluster.QueueLength(SieveWorld.Receiver));
    }

    [Fact]
    public async Task A_full_window_blocks_send_until_acknowledgements_free_room()
    {
        await using var world = await SieveWorld.StartAsync();
        world.Cluster.HoldAckResponses();
        await using var sender = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast(maxOutstanding: 4));
        for (var i = 0; i < 4; i++)
        {
            await sender.SendAsync(SieveWorld.Receiver, Payload(i)).AsTask().WaitAsync(Patience);
        }
        var fifth = sender.SendAsync(SieveWorld.Receiver, Payload(4)).AsTask();
        await Task.Delay(400);
        Assert.False(fifth.IsCompleted, "the fifth message was taken although four were outstanding");
        Assert.Equal(4, sender.Stats.Outstanding);

        world.Cluster.ReleaseAckResponses();
        var seq = await fifth.WaitAsync(Patience);
        Assert.Equal(5, seq.Seq);
        await sender.WaitAcknowledgedAsync(seq).WaitAsync(Patience);
    }

    [Fact]
    public async Task A_cancelled_send_is_not_numbered()
    {
        await using var world = await SieveWorld.StartAsync();
        world.Cluster.HoldAckResponses();
        await using var sender = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast(maxOutstanding: 1));
        Assert.Equal(1, (await sender.SendAsync(SieveWorld.Receiver, Payload(0))).Seq);
        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await sender.SendAsync(SieveWorld.Receiver, Payload(1), cts.Token));
        world.Cluster.ReleaseAckResponses();
        Assert.Equal(2, (await sender.SendAsync(SieveWorld.Receiver, Payload(2)).AsTask().WaitAsync(Patience)).Seq);
    }

    [Fact]
    public async Task Messages_go_through_the_other_pre_sq_when_one_does_not_answer()
    {
        await using var world = await SieveWorld.StartAsync();
        var (dead, alive) = (world.PreSqIds[0], world.PreSqIds[1]);
        world.Server.BlackHoles[dead] = true;
        await using var sender = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast(dead));
        long last = 0;
        for (var i = 0; i < 10; i++)
        {
            last = await sender.SendAsync(SieveWorld.Receiver, Payload(i));
        }
        await sender.WaitAcknowledgedAsync(last).WaitAsync(Patience);
        Assert.True(world.Server.FramesReceived.GetValueOrDefault(dead) > 0, "the first attempt should have gone to the assigned pre-SQ");
        Assert.True(world.Server.MessagesPassed.GetValueOrDefault(alive) >= 10, "the retransmissions should have gone through the other pre-SQ");
        Assert.Equal(10, world.Cluster.QueueLength(SieveWorld.Receiver));
    }
}
