using SieveQ.Agent.Hosting;
using SieveQ.Sieve.Sender;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using SieveQ.Sdk.Tests.Fakes;

namespace SieveQ.Sdk.Tests;

/// <summary>The durable outbox: what SendAsync accepted outlives the sender that accepted it.</summary>
public sealed class OutboxSenderTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    private static SieveQSenderOptions Fast(bool outbox = true) => new()
    {
        Protocol = new SenderSqOptions { RetransmitAfterMs = 150, AckRequestIntervalMs = 20, AckResponseWaitMs = 150 },
        Outbox = new SenderOutboxOptions { Enabled = outbox },
    };

    private static byte[] Payload(int i) => System.Text.Encoding.UTF8.GetBytes($"payload {i}");

    private static async Task<List<ReceivedMessage>> ReadAsync(SieveWorld world, int count)
    {
        await using var receiver = SieveQReceiver.Create(world.Context.ToClientConfiguration(), SieveWorld.Receiver, world.StateDir("receiver"),
            new SieveQReceiverOptions { Protocol = new Sieve.Receiver.PostSqOptions { FetchGraceMs = 20, FetchRetryMs = 100 } });
        var got = new List<ReceivedMessage>();
        using var cts = new CancellationTokenSource(Patience);
        await foreach (var m in receiver.ReadAllAsync(cts.Token))
        {
            got.Add(m);
            if (got.Count == count)
            {
                break;
            }
        }
        return got;
    }

    [Fact]
    public async Task Messages_accepted_while_the_deployment_is_unreachable_are_sent_by_the_next_sender_exactly_once()
    {
        await using var world = await SieveWorld.StartAsync();
        foreach (var p in world.PreSqIds)
        {
            world.Server.BlackHoles[p] = true;
        }
        var accepted = new List<long>();
        await using (var sender = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast()))
        {
            for (var i = 0; i < 30; i++)
            {
                accepted.Add(await sender.SendAsync(SieveWorld.Receiver, Payload(i)).AsTask().WaitAsync(Patience));
            }
            Assert.Equal(30, sender.Stats.OutboxPending);
            Assert.Equal(0, sender.AcknowledgedUpTo);
        }
        Assert.Equal(0, world.Cluster.QueueLength(SieveWorld.Receiver));

        foreach (var p in world.PreSqIds)
        {
            world.Server.BlackHoles.TryRemove(p, out _);
        }
        await using (var restarted = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast()))
        {
            Assert.Equal(30, restarted.Stats.OutboxPending);
            await restarted.WaitAcknowledgedAsync(accepted[^1]).WaitAsync(Patience);
            // Messages of the new run come after the restored ones, on the same route.
            var next = await restarted.SendAsync(SieveWorld.Receiver, Payload(30));
            Assert.True(next > accepted[^1]);
            await restarted.WaitAcknowledgedAsync(next).WaitAsync(Patience);
            Assert.Equal(0, restarted.Stats.OutboxPending);
            accepted.Add(next);
        }
        Assert.Equal(31, world.Cluster.QueueLength(SieveWorld.Receiver));
        var got = await ReadAsync(world, 31);
        Assert.Equal(accepted, got.Select(m => m.SenderSeq));
        Assert.Equal(Enumerable.Range(0, 31).Select(i => $"payload {i}"), got.Select(m => System.Text.Encoding.UTF8.GetString(m.Data.Span)));
    }

    [Fact]
    public async Task Without_the_outbox_what_was_not_acknowledged_is_lost_on_restart()
    {
        await using var world = await SieveWorld.StartAsync();
        foreach (var p in world.PreSqIds)
        {
            world.Server.BlackHoles[p] = true;
        }
        await using (var sender = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast(outbox: false)))
        {
            for (var i = 0; i < 5; i++)
            {
                await sender.SendAsync(SieveWorld.Receiver, Payload(i));
            }
        }
        // Frames the disposed sender had already written may still be read by the pre-SQs; they must meet the black
        // hole too, or a late one passes and is counted as if the next run had resent it.
        await FramesSettledAsync(world);
        foreach (var p in world.PreSqIds)
        {
            world.Server.BlackHoles.TryRemove(p, out _);
        }
        await using var restarted = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), Fast(outbox: false));
        var seq = await restarted.SendAsync(SieveWorld.Receiver, Payload(5));
        await restarted.WaitAcknowledgedAsync(seq).WaitAsync(Patience);
        Assert.Equal(1, world.Cluster.QueueLength(SieveWorld.Receiver));
    }

    [Fact]
    public async Task A_full_outbox_stops_accepting_and_says_so()
    {
        await using var world = await SieveWorld.StartAsync();
        foreach (var p in world.PreSqIds)
        {
            world.Server.BlackHoles[p] = true;
        }
        var options = Fast() with
        {
            Outbox = new SenderOutboxOptions { MaxMessages = 3 },
            UnavailableAfter = TimeSpan.FromMilliseconds(500),
        };
        await using var sender = SieveQSender.Create(world.Context.ToClientConfiguration(), 1, world.StateDir("sender"), options);
        for (var i = 0; i < 3; i++)
        {
            await sender.SendAsync(SieveWorld.Receiver, Payload(i));
        }
        var e = await Assert.ThrowsAsync<SieveQUnavailableException>(async () => await sender.SendAsync(SieveWorld.Receiver, Payload(3)));
        Assert.True(e.OutboxFull);
        Assert.Contains("outbox is full", e.Message, StringComparison.Ordinal);
        Assert.Equal(3, sender.Stats.OutboxPending);
    }

    /// <summary>Waits until the pre-SQs have read no new frame for half a second (at most 10 s).</summary>
    private static async Task FramesSettledAsync(SieveWorld world)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        var seen = -1L;
        while (DateTime.UtcNow < deadline)
        {
            var now = world.Server.FramesReceived.Values.Sum();
            if (now == seen)
            {
                return;
            }
            seen = now;
            await Task.Delay(500);
        }
    }
}
