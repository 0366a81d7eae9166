using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// The agreed state is bounded in bytes, not only in messages: the size rule runs before anything is held or
/// taken, a refused message is not taken (its sender sends it again), and a full state still fits a checkpoint.
/// </summary>
public sealed class ReplicaBudgetTests : IClassFixture<TestWorld>
{
    private const int Kib300 = 300 * 1024;
    private readonly TestWorld _w;
    private long _cid;
    private long _reqSeq;

    public ReplicaBudgetTests(TestWorld w) => _w = w;

    private ExecuteResult Run(SieveReplicaApplication app, params byte[][] items)
    {
        var results = app.ExecuteKeepingOutputs(TestWorld.At(++_cid, 0), [TestWorld.Request(10, ++_reqSeq, items)]);
        return ExecuteResultCodec.Decode(results.Single());
    }

    private static readonly long OneLargest = ReplicaSieveOptions.ChargedBytes(EnvelopeLimits.MaxDataBytes);

    [Fact]
    public void A_receivers_queue_refuses_by_bytes_and_takes_the_message_again_once_acknowledged()
    {
        var app = _w.Replica(new ReplicaSieveOptions { ReceiverQueueBytes = OneLargest, QueuedBytesTotal = 4 * OneLargest });
        var data = new byte[Kib300];
        // Three of 300 KiB fit in one largest message's room; the fourth does not.
        // The refused one is reported untaken, so the pre-SQ lets the sender's retransmission of it through again.
        Assert.Equal(new ExecuteResult(3, 0, 1) { Untaken = [new(1, 4)] }, Run(app, [.. Enumerable.Range(1, 4).Select(i => _w.Message(1, i, 100, data))]));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.ReceiverQueueFull]);
        Assert.Equal(3 * ReplicaSieveOptions.ChargedBytes(Kib300), app.QueueBytes(100));
        Assert.Equal(1, Run(app, ReceiverAckCodec.Encode(100, [new(1, 3)], _w.ReceiverSigning[100])).Accepted);
        Assert.Equal(0, app.QueueBytes(100));
        Assert.Equal(1, Run(app, _w.Message(1, 4, 100, data)).Accepted);
    }

    [Fact]
    public void All_queues_together_are_bounded_by_bytes()
    {
        var app = _w.Replica(new ReplicaSieveOptions { ReceiverQueueBytes = OneLargest, QueuedBytesTotal = OneLargest });
        var data = new byte[Kib300];
        Assert.Equal(3, Run(app, [.. Enumerable.Range(1, 3).Select(i => _w.Message(1, i, 100, data))]).Accepted);
        // Another receiver's queue is empty, but the total is spent.
        Assert.Equal(new ExecuteResult(0, 0, 1) { Untaken = [new(2, 1)] }, Run(app, _w.Message(2, 1, 101, data)));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.ReceiverQueueFull]);
    }

    [Fact]
    public void Held_messages_are_bounded_by_bytes_per_sender_and_reserve_room_in_their_queue()
    {
        var app = _w.Replica(new ReplicaSieveOptions { MaxHeldBytes = 2 * OneLargest, MaxHeldBytesPerSender = OneLargest });
        var data = new byte[Kib300];
        // Numbers 2..5 of sender 1 wait for 1: three fit in its held budget, the fourth is refused untaken.
        var r = Run(app, [.. Enumerable.Range(2, 4).Select(i => _w.Message(1, i, 100, data))]);
        Assert.Equal((0, 3, 1), (r.Accepted, r.Held, r.Dropped));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.OutOfOrder]);
        Assert.Equal(3 * ReplicaSieveOptions.ChargedBytes(Kib300), app.HeldBytes);
        Assert.Equal(app.HeldBytes, app.QueueBytes(100));
        // Another sender still has room of its own.
        Assert.Equal(1, Run(app, _w.Message(2, 2, 100, data)).Held);
        // The gap fills: the held ones are taken, the reservation becomes queued bytes.
        Assert.Equal(1, Run(app, _w.Message(1, 1, 100, "a")).Accepted);
        Assert.Equal(ReplicaSieveOptions.ChargedBytes(Kib300), app.HeldBytes);
        Assert.Equal(ReplicaSieveOptions.ChargedBytes(1) + (4 * ReplicaSieveOptions.ChargedBytes(Kib300)), app.QueueBytes(100));
    }

    [Fact]
    public void The_byte_accounting_survives_a_snapshot_and_the_snapshot_is_identical_after_restore()
    {
        var app = _w.Replica();
        var data = new byte[1000];
        Run(app, [.. Enumerable.Range(1, 5).Select(i => _w.Message(1, i, 100, data)), .. Enumerable.Range(3, 2).Select(i => _w.Message(2, i, 101, data))]);
        var snapshot = app.TakeSnapshot();
        var copy = _w.Replica();
        copy.RestoreSnapshot(snapshot);
        Assert.Equal(snapshot, copy.TakeSnapshot());
        Assert.Equal(app.QueueBytes(100), copy.QueueBytes(100));
        Assert.Equal(app.QueueBytes(101), copy.QueueBytes(101));
        Assert.Equal(app.HeldBytes, copy.HeldBytes);
        Assert.True(copy.HeldBytes > 0);
    }

    [Fact]
    public void A_state_filled_to_every_budget_stays_under_its_worst_case_and_what_a_checkpoint_carries()
    {
        var options = new ReplicaSieveOptions { ReceiverQueueBytes = 2 * OneLargest, QueuedBytesTotal = 3 * OneLargest, MaxHeldBytes = 2 * OneLargest, MaxHeldBytesPerSender = OneLargest };
        var app = _w.Replica(options);
        var big = new byte[EnvelopeLimits.MaxDataBytes / 4];
        // Fill both receivers' queues and both senders' held budgets, with far more than fits.
        for (var seq = 1; seq <= 12; seq++)
        {
            Run(app, _w.Message(1, seq, 100 + (seq % 2), big), _w.Message(2, seq + 20, 100, big));
        }
        var snapshot = app.TakeSnapshot();
        var worst = SieveStateBudget.WorstCaseBytes(options, senders: 2, receivers: 2, preSqs: 2, rulesBytes: 0);
        Assert.True(app.QueueBytes(100) + app.QueueBytes(101) <= options.QueuedBytesTotal);
        Assert.True(app.HeldBytes > 0 && app.HeldBytes <= options.MaxHeldBytes);
        Assert.True(snapshot.Length <= worst, $"snapshot {snapshot.Length} above the worst case {worst}");
        Assert.True(snapshot.Length > options.QueuedBytesTotal / 2, "the test did not fill the queues");
        Assert.True(worst <= SieveStateBudget.Limit);
    }

    [Fact]
    public void Budgets_that_could_outgrow_a_checkpoint_are_refused_at_start_saying_what_to_lower()
    {
        var e = Assert.Throws<ArgumentException>(() => _w.Replica(new ReplicaSieveOptions { QueuedBytesTotal = 64L << 20 }));
        Assert.Contains("lower queuedBytesTotal", e.Message, StringComparison.Ordinal);
        var small = Assert.Throws<ArgumentException>(() => _w.Replica(new ReplicaSieveOptions { ReceiverQueueBytes = 1024, QueuedBytesTotal = 1024 }));
        Assert.Contains("could never be taken", small.Message, StringComparison.Ordinal);
    }
}

/// <summary>
/// A message the replicas refused untaken must pass the pre-SQ again when its sender retransmits it: the agreed
/// result names it, and the pre-SQ forgets having passed it. Without that, a message refused for back-pressure
/// after it had passed every pre-SQ could never be delivered.
/// </summary>
public sealed class UntakenRetransmissionTests : IClassFixture<TestWorld>
{
    private readonly TestWorld _w;

    public UntakenRetransmissionTests(TestWorld w) => _w = w;

    [Fact]
    public void A_retransmission_of_an_untaken_message_passes_the_pre_sq_again_and_a_replay_of_a_taken_one_does_not()
    {
        var filter = new SieveQ.Sieve.PreSq.PreSqFilter(10, new SieveQ.Sieve.PreSq.PreSqOptions(), new SieveQ.Sieve.PreSq.SenderWhitelist([1]), s => _w.SenderPreSqRing(s, 10));
        var frames = Enumerable.Range(1, 3).Select(i => _w.Frame(1, 10, _w.Message(1, i, 100, "m"))).ToList();
        Assert.All(frames, f => Assert.True(filter.Inspect(f, 0).Passed));
        Assert.All(frames, f => Assert.False(filter.Inspect(f, 1).Passed));  // replays

        filter.Untaken([new UntakenMessage(1, 2)]);
        Assert.True(filter.Inspect(frames[1], 2).Passed);
        Assert.False(filter.Inspect(frames[0], 2).Passed);
        Assert.False(filter.Inspect(frames[2], 2).Passed);
        Assert.False(filter.Inspect(frames[1], 3).Passed);  // once again seen
        Assert.Equal(1, filter.UntakenForgotten);
    }

    [Fact]
    public void The_untaken_list_round_trips_and_is_bounded()
    {
        var r = new ExecuteResult(1, 2, 3) { Untaken = [new(1, 5), new(7, 1L << 40)] };
        Assert.Equal(r, ExecuteResultCodec.Decode(ExecuteResultCodec.Encode(r)));
        var many = new ExecuteResult(0, 0, 5000) { Untaken = [.. Enumerable.Range(1, 5000).Select(i => new UntakenMessage(1, i))] };
        Assert.Equal(ExecuteResultCodec.MaxUntaken, ExecuteResultCodec.Decode(ExecuteResultCodec.Encode(many)).Untaken.Count);
    }
}
