using SieveQ.Agent.Hosting;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using SieveQ.Sdk.Tests.Fakes;

namespace SieveQ.Sdk.Tests;

/// <summary>
/// One process per id: ConnectAsync takes the id's lease through the ordering (real replica state machines decide it)
/// before it opens anything, so a second process with the same sender or receiver id is refused with an error naming
/// the first; letting go on dispose frees it at once; a run that lost its lease while cut off stops instead of sending
/// under an id another process now holds. Before, two such processes took each other's sequence numbers in silence.
/// </summary>
public sealed class IdLeaseTests
{
    private static SieveQClientConfiguration Config(SieveWorld world) => world.Context.ToClientConfiguration() with { ConnectTimeout = TimeSpan.FromSeconds(10) };

    [Fact]
    public async Task A_second_sender_with_the_same_id_is_refused_naming_the_first_and_takes_over_once_it_is_disposed()
    {
        await using var world = await SieveWorld.StartAsync();
        var first = await SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("first"));
        await first.WaitAcknowledgedAsync(await first.SendAsync(SieveWorld.Receiver, "one"u8.ToArray())).WaitAsync(TimeSpan.FromSeconds(30));

        var e = await Assert.ThrowsAsync<IdHeldException>(() => SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("second")));
        Assert.Equal(("sender", 1), (e.Party, e.Id));
        Assert.Contains($"pid {Environment.ProcessId}", e.Holder, StringComparison.Ordinal);
        Assert.Contains(world.StateDir("first"), e.Holder, StringComparison.Ordinal);
        Assert.InRange(e.HeldFor, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(31));
        Assert.Contains("sender 1 is held by another process", e.Message, StringComparison.Ordinal);
        Assert.False(Directory.Exists(world.StateDir("second")), "the refused run opened nothing");

        await first.DisposeAsync();
        await using var second = await SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("second"));
        // Its state folder is new: the lease told it where the id's numbers stand, so its first is above the first run's.
        var two = await second.SendAsync(SieveWorld.Receiver, "two"u8.ToArray());
        Assert.True(two.Seq > 1, $"the second holder numbered {two.Seq}, a replay of the first's");
        await second.WaitAcknowledgedAsync(two).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(["one", "two"], await ReceiveAsync(world, 2));
    }

    /// <summary>What the receiver gets, in order, until <paramref name="count"/> messages.</summary>
    private static async Task<List<string>> ReceiveAsync(SieveWorld world, int count)
    {
        await using var receiver = SieveQReceiver.Create(world.Context.ToClientConfiguration(), SieveWorld.Receiver, world.StateDir("reader"));
        using var bound = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var got = new List<string>();
        await foreach (var m in receiver.ReadAllAsync(bound.Token))
        {
            got.Add(System.Text.Encoding.UTF8.GetString(m.Data.Span));
            if (got.Count == count)
            {
                break;
            }
        }
        return got;
    }

    [Fact]
    public async Task A_run_on_the_same_state_folder_shares_the_holder_and_its_failed_start_leaves_the_live_runs_lease_alone()
    {
        await using var world = await SieveWorld.StartAsync();
        await using var live = await SieveQSender.ConnectAsync(Config(world), 2, world.StateDir("shared"));

        // Same host and folder: the lease is its own (a crashed run's successor takes it back at once), but the folder's
        // exclusive files keep a second live process out.
        var inUse = await Assert.ThrowsAsync<SieveQConfigurationException>(() => SieveQSender.ConnectAsync(Config(world), 2, world.StateDir("shared")));
        Assert.Contains($"sender 2: its state folder {world.StateDir("shared")} is in use by another sender 2", inUse.Message, StringComparison.Ordinal);
        // Create says the same, in the same process (before, a platform file-sharing error).
        var again = Assert.Throws<SieveQConfigurationException>(() => SieveQSender.Create(Config(world), 2, world.StateDir("shared")));
        Assert.Contains("is in use by another sender 2", again.Message, StringComparison.Ordinal);

        // The failed start did not let the live run's lease go.
        var e = await Assert.ThrowsAsync<IdHeldException>(() => SieveQSender.ConnectAsync(Config(world), 2, world.StateDir("elsewhere")));
        Assert.Contains(world.StateDir("shared"), e.Holder, StringComparison.Ordinal);
        await live.WaitAcknowledgedAsync(await live.SendAsync(SieveWorld.Receiver, "still mine"u8.ToArray())).WaitAsync(TimeSpan.FromSeconds(30));
    }

    [Fact]
    public async Task A_second_receiver_with_the_same_id_is_refused()
    {
        await using var world = await SieveWorld.StartAsync();
        await using var first = await SieveQReceiver.ConnectAsync(Config(world), SieveWorld.Receiver, world.StateDir("r1"));
        var e = await Assert.ThrowsAsync<IdHeldException>(() => SieveQReceiver.ConnectAsync(Config(world), SieveWorld.Receiver, world.StateDir("r2")));
        Assert.Equal(("receiver", SieveWorld.Receiver), (e.Party, e.Id));
        Assert.Contains(world.StateDir("r1"), e.Holder, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_sender_whose_lease_lapsed_while_cut_off_and_was_taken_stops_with_the_new_holder_named()
    {
        await using var world = await SieveWorld.StartAsync();
        await using var cutOff = await SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("cut-off"));
        SentMessage last = null!;
        for (var i = 0; i < 5; i++)
        {
            last = await cutOff.SendAsync(SieveWorld.Receiver, "before the cut"u8.ToArray());
        }
        await cutOff.WaitAcknowledgedAsync(last).WaitAsync(TimeSpan.FromSeconds(30));

        // Its renewals stop reaching the replicas, and more than a lease term passes for them.
        world.Server.DropIdLease = q => q.Label.Contains(world.StateDir("cut-off"), StringComparison.Ordinal);
        world.Cluster.AgreedTimeAheadMs = 31_000;
        await using var taker = await SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("taker"));
        world.Server.DropIdLease = null;

        // Its next renewal (within 10 s) finds the taker's lease: it stops, and says why.
        var stopped = await WaitForAsync(async () =>
        {
            using var attempt = new CancellationTokenSource(TimeSpan.FromSeconds(2));
            try
            {
                await cutOff.SendAsync(SieveWorld.Receiver, "late"u8.ToArray(), attempt.Token);
                return null;
            }
            catch (OperationCanceledException)
            {
                return null;
            }
            catch (IdHeldException e)
            {
                return e;
            }
        }, TimeSpan.FromSeconds(40));
        Assert.Contains(world.StateDir("taker"), stopped.Holder, StringComparison.Ordinal);
        // The taker's folder is new: it starts above what the replicas had taken from the id when they granted it. (Here
        // only the replicas' clock jumped, so the cut-off run, whose own clock says its lease still runs, sent a few more
        // until its renewal found the taker; in real time it pauses before its term could end for the replicas.)
        var mine = await taker.SendAsync(SieveWorld.Receiver, "mine now"u8.ToArray());
        Assert.True(mine.Seq > last.Seq, $"the taker numbered {mine.Seq}, not above the {last.Seq} the replicas had taken");
    }

    [Fact]
    public async Task A_run_that_could_not_renew_for_its_term_less_the_margin_counts_its_lease_lapsed_and_a_renewal_restores_it()
    {
        await using var world = await SieveWorld.StartAsync();
        var now = 1_000_000L;
        var keys = world.Context.ToClientConfiguration();
        await using var keeper = await Internal.IdLeaseKeeper.AcquireAsync(keys, "sender", 2, world.StateDir("keeper"),
            Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance, CancellationToken.None, () => Volatile.Read(ref now));
        Assert.True(keeper.Valid);
        Volatile.Write(ref now, now + Sieve.Replica.IdLeaseTable.TermMs - Internal.IdLeaseKeeper.SafetyMarginMs - 1);
        Assert.True(keeper.Valid);
        Volatile.Write(ref now, now + 1);
        Assert.False(keeper.Valid);
        // Its next renewal (every 10 s) grants it again from the time it was asked.
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (!keeper.Valid)
        {
            Assert.True(DateTime.UtcNow < deadline, "no renewal restored the lease");
            await Task.Delay(200);
        }
    }

    /// <summary>
    /// The sender itself, on a lease whose clock the test moves: while the lease runs its frames leave; once this run
    /// can no longer count on it, what it numbers stays here (counted, nothing reaches a pre-SQ) until a renewal, after
    /// which the held message is sent and acknowledged.
    /// </summary>
    [Fact]
    public async Task A_sender_whose_lease_lapsed_here_sends_nothing_until_a_renewal_and_then_catches_up()
    {
        await using var world = await SieveWorld.StartAsync();
        var now = 1_000_000L;
        var config = world.Context.ToClientConfiguration();
        var keeper = await Internal.IdLeaseKeeper.AcquireAsync(config, "sender", 2, world.StateDir("lapse"),
            Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance, CancellationToken.None, () => Volatile.Read(ref now));
        await using var sender = SieveQSender.Create(config, 2, world.StateDir("lapse"));
        sender.HoldUnder(keeper);

        var first = await sender.SendAsync(SieveWorld.Receiver, "while the lease runs"u8.ToArray());
        await sender.WaitAcknowledgedAsync(first).WaitAsync(TimeSpan.FromSeconds(30));

        // Past the term less the margin since the last grant: the lease lapsed for this run. (A renewal that starts
        // between the jump and the send would make it valid again: then jump once more.)
        SentMessage? held = null;
        for (var attempt = 0; held is null; attempt++)
        {
            Assert.True(attempt < 3, "every lapse was renewed before the sender dispatched");
            Volatile.Write(ref now, Volatile.Read(ref now) + Sieve.Replica.IdLeaseTable.TermMs);
            var heldBefore = sender.FramesHeldForLease;
            var message = await sender.SendAsync(SieveWorld.Receiver, "while it lapsed"u8.ToArray());
            var deadline = DateTime.UtcNow.AddSeconds(30);
            while (sender.FramesHeldForLease == heldBefore && !keeper.Valid)
            {
                Assert.True(DateTime.UtcNow < deadline, "the sender neither held a frame nor saw a renewal");
                await Task.Delay(20);
            }
            if (sender.FramesHeldForLease > heldBefore)
            {
                held = message;
            }
        }
        var frames = world.Server.FramesReceived.Values.Sum();
        await Task.Delay(300);
        if (!keeper.Valid)
        {
            // Nothing reached a pre-SQ meanwhile, and the message is not acknowledged.
            Assert.Equal(frames, world.Server.FramesReceived.Values.Sum());
            Assert.True(sender.AcknowledgedUpTo < held.Seq);
        }
        // The next renewal (every 10 s) grants it from the time it was asked; the held message then goes out.
        await sender.WaitAcknowledgedAsync(held).WaitAsync(TimeSpan.FromSeconds(60));
        Assert.True(keeper.Valid);
    }

    /// <summary>
    /// A sender started without a lease (as the agent does when the deployment is away) that asks for it later stops,
    /// saying why, when another process holds the id by then, and when another process already sent under the id above
    /// its numbers (what it numbers would be dropped as replays).
    /// </summary>
    [Fact]
    public async Task A_sender_that_takes_its_lease_late_stops_when_another_process_holds_or_used_the_id()
    {
        await using var world = await SieveWorld.StartAsync();
        var config = world.Context.ToClientConfiguration();
        var log = Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;

        await using (var app = await SieveQSender.ConnectAsync(config, 2, world.StateDir("app")))
        {
            await using var late = SieveQSender.Create(config, 2, world.StateDir("late-1"));
            await late.TakeLeaseWhenReachableAsync(config, world.StateDir("late-1"), TimeSpan.FromMilliseconds(50), log).WaitAsync(TimeSpan.FromSeconds(30));
            var held = await Assert.ThrowsAsync<IdHeldException>(async () => await late.SendAsync(SieveWorld.Receiver, "too late"u8.ToArray()));
            Assert.Contains(world.StateDir("app"), held.Holder, StringComparison.Ordinal);
            SentMessage last = null!;
            for (var i = 0; i < 3; i++)
            {
                last = await app.SendAsync(SieveWorld.Receiver, "the app's"u8.ToArray());
            }
            await app.WaitAcknowledgedAsync(last).WaitAsync(TimeSpan.FromSeconds(30));
        }

        // The app let the id go, but the replicas took numbers from it that a fresh sender has not reached.
        await using var behind = SieveQSender.Create(config, 2, world.StateDir("late-2"));
        await behind.TakeLeaseWhenReachableAsync(config, world.StateDir("late-2"), TimeSpan.FromMilliseconds(50), log).WaitAsync(TimeSpan.FromSeconds(30));
        var stopped = await Assert.ThrowsAsync<InvalidOperationException>(async () => await behind.SendAsync(SieveWorld.Receiver, "replayed"u8.ToArray()));
        var used = Assert.IsType<SieveQConfigurationException>(stopped.InnerException);
        Assert.Contains("another process sent as sender 2", used.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_receiver_whose_lease_lapsed_here_withholds_its_acknowledgements_until_it_is_valid_again()
    {
        await using var world = await SieveWorld.StartAsync();
        var preSqs = world.Context.ToClientConfiguration().PreSqs.Select(p => (p.Key, p.Value, (Transport.Tls.TlsPin?)null));
        using var relay = new Receiver.AcknowledgementRelay(preSqs, TimeSpan.FromSeconds(5), Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance);
        var valid = false;
        relay.MayOffer = () => valid;
        Assert.False(await relay.SendAsync([0x04, 1, 2, 3], CancellationToken.None));
        Assert.True(relay.Owed);
        Assert.Equal(0, world.Server.AcknowledgementsQueued.Values.Sum());

        valid = true;
        Assert.True(await relay.RetryAsync(CancellationToken.None));
        Assert.False(relay.Owed);
        Assert.Equal(1, world.Server.AcknowledgementsQueued.Values.Sum());
    }

    private static async Task<T> WaitForAsync<T>(Func<Task<T?>> attempt, TimeSpan bound)
        where T : class
    {
        var deadline = DateTime.UtcNow + bound;
        while (true)
        {
            if (await attempt() is { } found)
            {
                return found;
            }
            Assert.True(DateTime.UtcNow < deadline, "timed out");
            await Task.Delay(250);
        }
    }
}
