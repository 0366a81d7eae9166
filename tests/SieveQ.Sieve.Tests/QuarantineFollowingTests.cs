using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.PreSq;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// A sender the replicas quarantined is named, with its remaining hold, in the agreed result of every request that
/// carried its messages, and the pre-SQ refuses its frames at check (a) meanwhile. Before, the pre-SQs never learnt of
/// it: a compromised sender flooding within its grant kept two thirds of the ordering busy with messages every replica
/// then dropped, and the legitimate senders' latency went from 0.1 s to seconds (docs/attacks.md).
/// </summary>
public sealed class QuarantineFollowingTests(TestWorld w) : IClassFixture<TestWorld>
{
    private long _cid;

    private ExecuteResult Run(SieveReplicaApplication app, long timeMs, params byte[][] items) =>
        ExecuteResultCodec.Decode(app.ExecuteKeepingOutputs(TestWorld.At(++_cid, timeMs), [TestWorld.Request(10, _cid, items)]).Single());

    [Fact]
    public void The_result_names_a_quarantined_sender_with_its_hold_and_leaves_other_results_as_they_were()
    {
        var app = w.Replica(new ReplicaSieveOptions { SenderSuspicion = new(QuarantineAt: 5, ReleaseBelow: 2, DecayPerSecond: 1), ReplayWeight = 1 });
        var m = w.Message(3, 1, 100, "x");
        Run(app, 0, m);
        for (var i = 0; i < 5; i++)
        {
            Run(app, 0, m);
        }
        Assert.True(app.IsSenderQuarantined(3));
        // Two of its messages and one of sender 1's in one request: one entry, sender 1 not named.
        var res = Run(app, 1_000, w.Message(3, 2, 100, "y"), w.Message(1, 1, 100, "a"), w.Message(3, 3, 100, "z"));
        Assert.Equal((1, 2), (res.Accepted, res.Dropped));
        Assert.Equal([new SenderQuarantineHold(3, 2_001)], res.Quarantined);
        // Once released by decay, it is named no more.
        Assert.Empty(Run(app, 20_000, w.Message(3, 2, 100, "y")).Quarantined);

        // A request with no quarantined sender encodes exactly as before the section existed.
        var plain = ExecuteResultCodec.Encode(new ExecuteResult(1, 0, 0));
        Assert.Equal(1 + 4 + 4 + 4 + 4, plain.Length);
    }

    [Fact]
    public void The_section_round_trips_and_malformed_ones_are_refused()
    {
        var r = new ExecuteResult(1, 0, 2) { Untaken = [new(4, 9)], Quarantined = [new(2, 50), new(7, ExecuteResultCodec.MaxHoldMs)] };
        Assert.Equal(r, ExecuteResultCodec.Decode(ExecuteResultCodec.Encode(r)));
        Assert.NotEqual(r, ExecuteResultCodec.Decode(ExecuteResultCodec.Encode(r with { Quarantined = [new(2, 51), new(7, 1)] })));

        var head = ExecuteResultCodec.Encode(new ExecuteResult(1, 0, 2));
        byte[] With(params (uint Sender, ulong Hold)[] entries)
        {
            var tail = new List<byte>(BitConverter.GetBytes((uint)entries.Length));
            foreach (var (sender, hold) in entries)
            {
                tail.AddRange(BitConverter.GetBytes(sender));
                tail.AddRange(BitConverter.GetBytes(hold));
            }
            return [.. head, .. tail];
        }
        Assert.Equal([new SenderQuarantineHold(3, 10)], ExecuteResultCodec.Decode(With((3, 10))).Quarantined);
        Assert.Throws<MalformedEnvelopeException>(() => ExecuteResultCodec.Decode(With()));
        Assert.Throws<MalformedEnvelopeException>(() => ExecuteResultCodec.Decode(With((5, 10), (3, 10))));
        Assert.Throws<MalformedEnvelopeException>(() => ExecuteResultCodec.Decode(With((3, 10), (3, 10))));
        Assert.Throws<MalformedEnvelopeException>(() => ExecuteResultCodec.Decode(With((3, (ulong)ExecuteResultCodec.MaxHoldMs + 1))));
        Assert.Throws<MalformedEnvelopeException>(() => ExecuteResultCodec.Decode(With((3, 10))[..^1]));
        Assert.Throws<MalformedEnvelopeException>(() => ExecuteResultCodec.Decode([.. With((3, 10)), 0]));
        var tooMany = new byte[head.Length + 4];
        head.CopyTo(tooMany, 0);
        BitConverter.GetBytes((uint)ExecuteResultCodec.MaxQuarantineHolds + 1).CopyTo(tooMany, head.Length);
        Assert.Throws<MalformedEnvelopeException>(() => ExecuteResultCodec.Decode(tooMany));
    }

    [Fact]
    public void The_pre_sq_refuses_a_followed_sender_at_check_a_until_the_hold_ends()
    {
        var filter = new PreSqFilter(10, new PreSqOptions(), new SenderWhitelist([1, 2]), s => w.SenderPreSqRing(s, 10));
        Assert.True(filter.Inspect(w.Frame(1, 10, w.Message(1, 1, 100, "m")), 0).Passed);

        filter.FollowQuarantines([new SenderQuarantineHold(1, 2_000), new SenderQuarantineHold(9, 2_000)], nowMs: 1_000);
        Assert.Equal((1L, 1), (filter.QuarantinesFollowed, filter.HeldBackSenders));  // 9 is not whitelisted here
        var refused = filter.Inspect(w.Frame(1, 10, w.Message(1, 2, 100, "m")), 2_999);
        Assert.False(refused.Passed);
        Assert.Equal(1, filter.Drops[SieveStage.Whitelist, DropReason.Quarantined]);
        // Another sender is untouched; refused at (a), the number is not burnt and passes once the hold ends.
        Assert.True(filter.Inspect(w.Frame(2, 10, w.Message(2, 1, 100, "m")), 2_999).Passed);
        Assert.True(filter.Inspect(w.Frame(1, 10, w.Message(1, 2, 100, "m")), 3_000).Passed);
        Assert.Equal(0, filter.HeldBackSenders);

        // The latest agreed result wins: a shorter hold after a longer one ends sooner.
        filter.FollowQuarantines([new SenderQuarantineHold(1, 60_000)], nowMs: 4_000);
        filter.FollowQuarantines([new SenderQuarantineHold(1, 100)], nowMs: 4_000);
        Assert.True(filter.Inspect(w.Frame(1, 10, w.Message(1, 3, 100, "m")), 4_100).Passed);
    }
}
