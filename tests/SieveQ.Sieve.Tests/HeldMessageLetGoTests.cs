using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.PreSq;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// A message held past a gap and let go when the gap stays open (<c>GapTimedOut</c>) is named untaken, and so is a copy
/// of a held message, so the pre-SQ that passed it lets the sender's retransmission through. Before, neither was named:
/// with one pre-SQ, or once every pre-SQ had passed a copy, the retransmission was refused at the pre-SQs as a replay
/// for good, and the sender stalled behind that number.
/// </summary>
public sealed class HeldMessageLetGoTests(TestWorld w) : IClassFixture<TestWorld>
{
    private const int PreSqId = 10;
    private long _cid;

    private ExecuteResult Run(SieveReplicaApplication app, params byte[][] items) =>
        ExecuteResultCodec.Decode(app.ExecuteKeepingOutputs(TestWorld.At(++_cid, 0), [TestWorld.Request(PreSqId, _cid, items)]).Single());

    private PreSqFilter Filter() => new(PreSqId, new PreSqOptions(), new SenderWhitelist([1, 2]), s => w.SenderPreSqRing(s, PreSqId));

    /// <summary>What the pre-SQ forwards for a frame it passes.</summary>
    private byte[] Passed(PreSqFilter filter, int sender, byte[] message)
    {
        var verdict = filter.Inspect(w.Frame(sender, PreSqId, message), 0);
        Assert.True(verdict.Passed, $"the pre-SQ refused sender {sender}'s frame at {verdict.Stage}: {verdict.Reason}");
        return verdict.Body.ToArray();
    }

    [Fact]
    public void A_message_let_go_after_patience_passes_the_only_pre_sq_again_and_is_taken_after_the_gap()
    {
        var app = w.Replica(new ReplicaSieveOptions { ReorderPatience = 3 });
        var filter = Filter();
        var (m1, m2, m3) = (w.Message(1, 1, 100, "a"), w.Message(1, 2, 100, "b"), w.Message(1, 3, 100, "c"));
        Assert.Equal(1, Run(app, Passed(filter, 1, m1)).Accepted);
        // 2 is lost before the pre-SQ: 3 passes and waits at the replicas for it.
        Assert.Equal(1, Run(app, Passed(filter, 1, m3)).Held);
        Assert.Empty(Run(app, Passed(filter, 2, w.Message(2, 1, 100, "x")), Passed(filter, 2, w.Message(2, 2, 100, "y"))).Untaken);
        // Another sender's message runs the patience out: 3 is let go, and the result of that request names it.
        var letGo = Run(app, Passed(filter, 2, w.Message(2, 3, 100, "z")));
        Assert.Equal(new ExecuteResult(1, 0, 0) { Untaken = [new(1, 3)] }, letGo);
        Assert.Equal(0, app.HeldCount);
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.GapTimedOut]);
        Assert.False(filter.Inspect(w.Frame(1, PreSqId, m3), 0).Passed);

        filter.Untaken(letGo.Untaken);
        // The gap fills, and 3's retransmission passes the pre-SQ and is taken after 2.
        Assert.Equal(1, Run(app, Passed(filter, 1, m2)).Accepted);
        Assert.Equal(1, Run(app, Passed(filter, 1, m3)).Accepted);
        Assert.Equal(3, app.DeliveredUpTo(1));
    }

    [Fact]
    public void A_copy_of_a_held_message_is_named_untaken_and_the_message_stays_held_once()
    {
        var app = w.Replica(new ReplicaSieveOptions { ReorderPatience = 100 });
        var m3 = w.Message(1, 3, 100, "c");
        Assert.Equal(1, Run(app, w.Message(1, 1, 100, "a")).Accepted);
        Assert.Equal(1, Run(app, m3).Held);
        // The sender retransmitted 3 through a pre-SQ that then forwarded it: that pre-SQ is told to forget it.
        Assert.Equal(new ExecuteResult(0, 0, 1) { Untaken = [new(1, 3)] }, Run(app, m3));
        Assert.Equal(1, app.HeldCount);
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.Replay]);
        Assert.Equal(1, Run(app, w.Message(1, 2, 100, "b")).Accepted);
        Assert.Equal(3, app.DeliveredUpTo(1));
    }
}
