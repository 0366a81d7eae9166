using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Replica;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sieve.Tests;

public sealed class ReplicaTests : IClassFixture<TestWorld>
{
    private readonly TestWorld _w;
    private long _cid;
    private long _reqSeq;

    public ReplicaTests(TestWorld w) => _w = w;

    private ExecuteResult Run(SieveReplicaApplication app, long timeMs, params byte[][] items) => Run(app, timeMs, 10, items);

    private ExecuteResult Run(SieveReplicaApplication app, long timeMs, int preSq, params byte[][] items)
    {
        var results = app.ExecuteKeepingOutputs(TestWorld.At(++_cid, timeMs), [TestWorld.Request(preSq, ++_reqSeq, items)]);
        return ExecuteResultCodec.Decode(results.Single());
    }

    private static List<QueuedItem> Delivered(SieveReplicaApplication app) =>
        app.TakeOutputs().Batches.SelectMany(b => b.Items).ToList();

    [Fact]
    public void Valid_messages_are_approved_queued_and_batched_per_receiver()
    {
        var app = _w.Replica();
        var r = Run(app, 1000, _w.Message(1, 1, 100, "a"), _w.Message(1, 2, 101, "b"), _w.Message(2, 1, 100, "c"));
        Assert.Equal(new ExecuteResult(3, 0, 0), r);
        var outbox = app.TakeOutputs();
        Assert.Equal([100, 101], outbox.Batches.Select(b => b.Receiver));
        var to100 = outbox.Batches[0].Items;
        Assert.Equal([(1, 1L, 1L), (2, 1L, 1L)], to100.Select(i => (i.Sender, i.SenderSeq, i.RouteSeq)));
        Assert.Equal(TaggedHash.DataDigest("a"u8), to100[0].DataDigest);
        // Route numbers are per (sender, receiver): sender 1's message to 101 is route number 1 there.
        Assert.Equal(1, outbox.Batches[1].Items[0].RouteSeq);
        Assert.Equal(2, app.QueueLength(100));
    }

    [Fact]
    public void Bad_signature_and_bad_merkle_path_are_dropped_and_suspected()
    {
        var app = _w.Replica();
        var tampered = _w.Message(1, 1, 100, "hello");
        tampered[SenderMessageCodec.HeaderBytes] ^= 1;
        Assert.Equal(new ExecuteResult(0, 0, 1), Run(app, 0, tampered));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.BadSignature]);
        Assert.True(app.PreSqSuspicion(10) > 0);
        // One pre-SQ's word is not enough against the sender: that pre-SQ may have flipped the bits.
        Assert.Equal(0, app.SenderSuspicion(1));
        Run(app, 0, tampered);
        Assert.Equal(0, app.SenderSuspicion(1));
        // The same through a second pre-SQ: now the sender is the likelier liar.
        Run(app, 0, 11, tampered);
        Assert.True(app.SenderSuspicion(1) > 0);
        Assert.True(app.PreSqSuspicion(11) > 0);

        var regions = new[] { SenderMessageCodec.EncodeSignedRegion(1, 1, 100, [1]), SenderMessageCodec.EncodeSignedRegion(1, 2, 100, [2]), SenderMessageCodec.EncodeSignedRegion(1, 3, 100, [3]) };
        var batch = BatchSigner.Sign(1, regions, _w.SenderSigning[1]);
        var m = SenderMessageCodec.Decode(batch[1]);
        var badPath = SenderMessageCodec.Encode(m.SignedRegion.Span, m.Auth with { LeafCount = 9 });
        Assert.Equal(new ExecuteResult(0, 0, 1), Run(app, 0, badPath));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.BadMerklePath]);
        // The genuine batch still passes: a forged copy did not burn the sequence numbers.
        Assert.Equal(new ExecuteResult(3, 0, 0), Run(app, 0, batch));
    }

    [Fact]
    public void Replays_and_jumps_are_dropped_at_e()
    {
        var app = _w.Replica(new ReplicaSieveOptions { WindowSize = 64, MaxAhead = 100 });
        var m = _w.Message(1, 1, 100, "x");
        Assert.Equal(1, Run(app, 0, m).Accepted);
        Assert.Equal(new ExecuteResult(0, 0, 1), Run(app, 0, m));
        Assert.Equal(new ExecuteResult(0, 0, 1), Run(app, 0, 11, m));
        Assert.Equal(2, app.Drops[SieveStage.ReplicaAdmission, DropReason.Replay]);
        Assert.Equal(new ExecuteResult(0, 0, 1), Run(app, 0, _w.Message(1, 500, 100, "x")));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.TooFarAhead]);
    }

    [Fact]
    public void Grant_uses_agreed_time()
    {
        var app = _w.Replica(new ReplicaSieveOptions { GrantRatePerSecond = 2, GrantBurst = 2 });
        Assert.Equal(new ExecuteResult(2, 0, 1) { Untaken = [new(1, 3)] }, Run(app, 0, _w.Message(1, 1, 100, "a"), _w.Message(1, 2, 100, "b"), _w.Message(1, 3, 100, "c")));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.GrantExceeded]);
        // Not marked: once agreed time refills the grant, the same message passes.
        Assert.Equal(new ExecuteResult(1, 0, 0), Run(app, 500, _w.Message(1, 3, 100, "c")));
    }

    [Fact]
    public void Rules_deny_unknown_routes_and_oversized_messages()
    {
        var rules = new RoutePolicy([new Route(1, 100, 4)]);
        var app = _w.Replica(rules: rules);
        var r = Run(app, 0, _w.Message(1, 1, 100, "ok"), _w.Message(1, 2, 101, "no route"), _w.Message(1, 3, 100, "too large"), _w.Message(1, 4, 999, "nobody"));
        Assert.Equal(new ExecuteResult(1, 0, 3), r);
        Assert.Equal(2, app.Drops[SieveStage.Rules, DropReason.RuleDenied]);
        Assert.Equal(1, app.Drops[SieveStage.Rules, DropReason.UnknownReceiver]);
        Assert.Single(Delivered(app));
        // Denied messages are settled (acknowledged), not left for retransmission.
        Assert.Equal(4, app.DeliveredUpTo(1));
    }

    [Fact]
    public void Reorder_buffer_releases_when_the_gap_fills()
    {
        var seenOrder = new List<long>();
        var app = _w.Replica(rules: new RecordingRules(seenOrder));
        Assert.Equal(new ExecuteResult(0, 2, 0), Run(app, 0, _w.Message(1, 3, 100, "c"), _w.Message(1, 2, 100, "b")));
        Assert.Equal(2, app.HeldCount);
        Assert.Equal(new ExecuteResult(1, 0, 0), Run(app, 0, _w.Message(1, 1, 100, "a")));
        Assert.Equal([1L, 2L, 3L], seenOrder);
        Assert.Equal([1L, 2L, 3L], Delivered(app).Select(i => i.SenderSeq));
        Assert.Equal(0, app.HeldCount);
    }

    [Fact]
    public void Reorder_buffer_gives_up_after_patience_other_messages()
    {
        var seenOrder = new List<long>();
        var app = _w.Replica(new ReplicaSieveOptions { ReorderPatience = 3 }, new RecordingRules(seenOrder));
        Run(app, 0, _w.Message(1, 1, 100, "a"));
        Assert.Equal(1, Run(app, 0, _w.Message(1, 3, 100, "c")).Held);
        Run(app, 0, _w.Message(2, 1, 100, "x"), _w.Message(2, 2, 100, "y"));
        Assert.Equal(1, app.HeldCount);
        Run(app, 0, _w.Message(2, 3, 100, "z"));
        Assert.Equal(0, app.HeldCount);
        // Sender 1's message 3 was let go untaken: nothing of sender 1 was taken past its gap.
        Assert.Equal([1L, 1, 2, 3], seenOrder);
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.GapTimedOut]);
        // The gap fills and the sender sends 3 again: both go through, in order.
        Assert.Equal(1, Run(app, 0, _w.Message(1, 2, 100, "b")).Accepted);
        Assert.Equal(1, Run(app, 0, _w.Message(1, 3, 100, "c")).Accepted);
        Assert.Equal([1L, 1, 2, 3, 2, 3], seenOrder);
    }

    [Fact]
    public void Nothing_is_taken_past_a_gap_so_a_late_fill_keeps_the_senders_order()
    {
        var seenOrder = new List<long>();
        var app = _w.Replica(new ReplicaSieveOptions { ReorderThreshold = 2 }, new RecordingRules(seenOrder));
        Run(app, 0, _w.Message(1, 1, 100, "a"));
        // 3 and 4 wait for 2; 5 is beyond the threshold and is refused untaken (not acknowledged).
        var r = Run(app, 0, _w.Message(1, 3, 100, "c"), _w.Message(1, 4, 100, "d"), _w.Message(1, 5, 100, "e"));
        Assert.Equal((0, 2, 1), (r.Accepted, r.Held, r.Dropped));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.OutOfOrder]);
        // A retransmission of a held message is a replay, not a second hold.
        Assert.Equal(1, Run(app, 0, _w.Message(1, 3, 100, "c")).Dropped);
        Assert.Equal(1, Run(app, 0, _w.Message(1, 2, 100, "b")).Accepted);
        Assert.Equal(1, Run(app, 0, _w.Message(1, 5, 100, "e")).Accepted);
        Assert.Equal([1L, 2, 3, 4, 5], seenOrder);
        Assert.Equal([1L, 2, 3, 4, 5], app.TakeOutputs().Batches.SelectMany(b => b.Items).Select(i => i.SenderSeq));
    }

    [Fact]
    public void Receiver_queue_full_pushes_back_on_the_senders_grant_until_acknowledged()
    {
        var app = _w.Replica(new ReplicaSieveOptions { ReceiverQueueCapacity = 2 });
        Assert.Equal(new ExecuteResult(2, 0, 1) { Untaken = [new(1, 3)] }, Run(app, 0, _w.Message(1, 1, 100, "a"), _w.Message(1, 2, 100, "b"), _w.Message(1, 3, 100, "c")));
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.ReceiverQueueFull]);
        Assert.Equal(500, app.GrantScalePermille(1));
        // Other receivers are unaffected.
        Assert.Equal(1, Run(app, 0, _w.Message(2, 1, 101, "d")).Accepted);
        var ack = ReceiverAckCodec.Encode(100, [new(1, 2)], _w.ReceiverSigning[100]);
        Assert.Equal(1, Run(app, 0, 100, ack).Accepted);
        Assert.Equal(0, app.QueueLength(100));
        Assert.Equal(625, app.GrantScalePermille(1));
        Assert.Equal(1, Run(app, 0, _w.Message(1, 3, 100, "c")).Accepted);
        // A forged acknowledgement changes nothing.
        var forged = ReceiverAckCodec.Encode(100, [new(1, 3)], _w.ReceiverSigning[101]);
        Assert.Equal(new ExecuteResult(0, 0, 1), Run(app, 0, 100, forged));
        Assert.Equal(1, app.QueueLength(100));
    }

    [Fact]
    public void Ackreq_reports_loss_and_moves_a_lossy_sender_to_another_pre_sq()
    {
        var app = _w.Replica();
        Run(app, 0, _w.Message(1, 1, 100, "a"), _w.Message(1, 2, 100, "b"));
        Assert.Equal(1, Run(app, 10, AckRequestCodec.Encode(1, 2, 1, 1, _w.SenderSigning[1])).Accepted);
        var res = app.TakeOutputs().AckResponses.Single();
        Assert.Equal(new OutboxAckResponse(1, 10, 0, 2, 10, 1), res);

        // Numbers 3..10 sent, only 3 and 4 arrive: 75% loss through pre-SQ 10, measured once the claim is a grace
        // period old (the ACKREQ at 1,010 measures the claim of 10, 1..2, all in).
        Run(app, 20, _w.Message(1, 3, 100, "c"), _w.Message(1, 4, 100, "d"));
        Run(app, 1_010, AckRequestCodec.Encode(1, 10, 5, 2, _w.SenderSigning[1]));
        Assert.Equal(0, app.TakeOutputs().AckResponses.Single().LossPpm);
        Run(app, 2_010, AckRequestCodec.Encode(1, 10, 5, 3, _w.SenderSigning[1]));
        res = app.TakeOutputs().AckResponses.Single();
        Assert.Equal(750_000, res.LossPpm);
        Assert.Equal(4, res.DeliveredUpTo);
        Assert.Equal(11, res.AssignedPreSq);
        Assert.Equal(11, app.AssignedPreSq(1));

        // The rate is repeated until the next measurement, and does not move the sender again.
        Run(app, 2_100, AckRequestCodec.Encode(1, 10, 5, 4, _w.SenderSigning[1]));
        res = app.TakeOutputs().AckResponses.Single();
        Assert.Equal((750_000, 11), (res.LossPpm, res.AssignedPreSq));

        // A replayed ACKREQ (same nonce) is stale; a forged one fails its signature.
        Assert.Equal(1, Run(app, 2_200, AckRequestCodec.Encode(1, 10, 5, 4, _w.SenderSigning[1])).Dropped);
        Assert.Equal(1, Run(app, 2_200, AckRequestCodec.Encode(1, 10, 5, 5, _w.SenderSigning[2])).Dropped);
        Assert.Equal(1, app.Drops[SieveStage.ReplicaAdmission, DropReason.StaleNonce]);
    }

    [Fact]
    public void Messages_still_in_flight_at_an_ackreq_are_not_counted_lost()
    {
        // At start-up (and under load) an ACKREQ claims numbers still queued at the pre-SQ or waiting to be
        // ordered. Counted lost at once, they moved the sender off its healthy pre-SQ for good.
        var app = _w.Replica();
        Run(app, 0, _w.Message(1, 1, 100, "a"));
        Run(app, 10, AckRequestCodec.Encode(1, 40, 1, 1, _w.SenderSigning[1]));
        Assert.Equal((0, 10), (app.TakeOutputs().AckResponses.Single().LossPpm, app.AssignedPreSq(1)));
        // 2..40 arrive half a second later, still inside the grace period of the claim.
        Run(app, 500, Enumerable.Range(2, 39).Select(i => _w.Message(1, i, 100, "m")).ToArray());
        Run(app, 1_100, AckRequestCodec.Encode(1, 40, 41, 2, _w.SenderSigning[1]));
        var res = app.TakeOutputs().AckResponses.Single();
        Assert.Equal((0, 10, 40L), (res.LossPpm, res.AssignedPreSq, res.DeliveredUpTo));
    }

    [Fact]
    public void A_pending_loss_claim_survives_a_snapshot_and_a_snapshot_without_one_still_reads()
    {
        var app = _w.Replica();
        Run(app, 0, _w.Message(1, 1, 100, "a"));
        Run(app, 10, AckRequestCodec.Encode(1, 5, 1, 1, _w.SenderSigning[1]));
        app.TakeOutputs();
        var snapshot = app.TakeSnapshot();
        var restored = _w.Replica();
        restored.RestoreSnapshot(snapshot);
        Assert.Equal(snapshot, restored.TakeSnapshot());
        // The restored replica measures the claim the snapshot carried: 2..5 never came.
        Run(restored, 1_100, AckRequestCodec.Encode(1, 5, 2, 2, _w.SenderSigning[1]));
        Assert.Equal(800_000, restored.TakeOutputs().AckResponses.Single().LossPpm);

        // A snapshot written before the claims section existed ends at the enrolment changes (the claims and the
        // loss moves after them, empty, are 4-byte zero counts): it reads, with no claim pending; so does one written
        // before the loss moves existed.
        var fresh = _w.Replica();
        Run(fresh, 0, _w.Message(1, 1, 100, "a"));
        var old = fresh.TakeSnapshot();
        Assert.Equal(new byte[8], old[^8..]);
        foreach (var cut in new[] { 8, 4 })
        {
            var reader = _w.Replica();
            reader.RestoreSnapshot(old[..^cut]);
            Assert.Equal(old, reader.TakeSnapshot());
        }
        // A claims section naming an unknown sender is refused.
        var bad = old[..^8].Concat(new byte[] { 1, 0, 0, 0, 9, 0, 0, 0 }).Concat(new byte[20]).ToArray();
        Assert.Throws<MalformedEnvelopeException>(() => _w.Replica().RestoreSnapshot(bad));
    }

    [Fact]
    public void A_sender_moved_off_a_pre_sq_for_loss_goes_to_a_warned_one_and_a_warning_does_not_send_it_back()
    {
        var app = _w.Replica();
        Run(app, 0, 10, _w.Message(1, 1, 100, "a"));
        Run(app, 10, 10, AckRequestCodec.Encode(1, 1, 2, 1, _w.SenderSigning[1]));
        Assert.Equal(10, app.AssignedPreSq(1));
        // Pre-SQ 11 warns of load; then the sender's claim of 2..100 through 10 comes to nothing.
        Run(app, 100, 11, LoadWarningCodec.Encode(new LoadWarning(11, 900)));
        Run(app, 1_100, 10, AckRequestCodec.Encode(1, 100, 2, 2, _w.SenderSigning[1]));
        Run(app, 2_200, 10, AckRequestCodec.Encode(1, 100, 2, 3, _w.SenderSigning[1]));
        var res = app.TakeOutputs().AckResponses[^1];
        Assert.Equal((1_000_000, 11), (res.LossPpm, res.AssignedPreSq));

        // Pre-SQ 11 warns again: without the hold the sender went straight back to the pre-SQ that lost everything.
        Run(app, 2_300, 11, Enumerable.Range(2, 99).Select(i => _w.Message(1, i, 100, "m")).ToArray());
        Run(app, 2_400, 11, LoadWarningCodec.Encode(new LoadWarning(11, 900)));
        Run(app, 2_500, 11, AckRequestCodec.Encode(1, 100, 101, 4, _w.SenderSigning[1]));
        Assert.Equal(11, app.AssignedPreSq(1));

        // The hold is agreed state: a replica restored from a snapshot keeps the sender where it is too.
        var restored = _w.Replica();
        restored.RestoreSnapshot(app.TakeSnapshot());
        Assert.Equal(app.TakeSnapshot(), restored.TakeSnapshot());
        Run(restored, 3_000, 11, AckRequestCodec.Encode(1, 100, 101, 5, _w.SenderSigning[1]));
        Assert.Equal(11, restored.AssignedPreSq(1));

        // Once the hold is over, load may move it again.
        Run(app, 40_000, 11, LoadWarningCodec.Encode(new LoadWarning(11, 900)));
        Run(app, 40_100, 11, AckRequestCodec.Encode(1, 100, 101, 6, _w.SenderSigning[1]));
        Assert.Equal(10, app.AssignedPreSq(1));
    }

    [Fact]
    public void New_senders_are_placed_where_the_fewest_are_whichever_pre_sq_their_first_ackreq_came_through()
    {
        // Both first ACKREQs come through pre-SQ 11 (the first answered at start-up is a race); placed by origin, both
        // senders sat on 11 and none on 10.
        var app = _w.Replica();
        Run(app, 0, 11, AckRequestCodec.Encode(1, 0, 1, 1, _w.SenderSigning[1]));
        Run(app, 10, 11, AckRequestCodec.Encode(2, 0, 1, 1, _w.SenderSigning[2]));
        Assert.Equal((10, 11), (app.AssignedPreSq(1), app.AssignedPreSq(2)));
        // A warned pre-SQ is passed over while another is healthy; a placed sender stays where it is.
        Run(app, 20, 10, LoadWarningCodec.Encode(new LoadWarning(10, 900)));
        Run(app, 30, 10, AckRequestCodec.Encode(3, 0, 1, 1, _w.SenderSigning[3]));
        Assert.Equal(11, app.AssignedPreSq(3));
        Run(app, 40, 11, AckRequestCodec.Encode(2, 0, 1, 2, _w.SenderSigning[2]));
        Assert.Equal(11, app.AssignedPreSq(2));
    }

    [Fact]
    public void Loss_a_sender_reports_moves_it_but_never_quarantines_a_pre_sq()
    {
        // Loss is the sender's word, and late is not lost: a lying sender (or an honest one whose retransmissions
        // are queued at another pre-SQ under overload) claims numbers that never arrived, ACKREQ after ACKREQ.
        // That may move the sender, but it is no evidence a replica can check against the pre-SQ: if it were, one
        // sender could get every pre-SQ quarantined in turn, and with them every honest sender's traffic.
        var app = _w.Replica();
        Run(app, 0, 10, _w.Message(1, 1, 100, "a"));
        for (var i = 1; i <= 200; i++)
        {
            var claimed = 1 + (i * 1_000);
            Run(app, 100 * i, 10, AckRequestCodec.Encode(1, claimed, 2, i, _w.SenderSigning[1]));
            Run(app, (100 * i) + 50, 11, AckRequestCodec.Encode(1, claimed + 500, 2, i + 1_000, _w.SenderSigning[1]));
        }
        // The ACKREQs through pre-SQ 11 carry nonces above every later one through 10, so only the first of them is
        // answered. Loss is measured from the first claim a grace period old (the first second is not measured yet).
        var responses = app.TakeOutputs().AckResponses;
        Assert.Equal(201, responses.Count);
        Assert.True(responses.Skip(20).All(r => r.LossPpm > 900_000), "every ACKREQ after the first second should have reported near-total loss");
        Assert.False(app.IsPreSqQuarantined(10));
        Assert.False(app.IsPreSqQuarantined(11));
        Assert.Equal(0, app.PreSqSuspicion(10));
        Assert.Equal(0, app.PreSqSuspicion(11));
        // Both pre-SQs still carry traffic.
        Assert.Equal(1, Run(app, 30_000, 10, _w.Message(2, 1, 100, "b")).Accepted);
        Assert.Equal(1, Run(app, 30_000, 11, _w.Message(2, 2, 100, "c")).Accepted);
    }

    [Fact]
    public void Ackreq_lowest_pending_settles_numbers_skipped_after_a_sender_restart()
    {
        var app = _w.Replica();
        Run(app, 0, _w.Message(1, 1, 100, "a"));
        // The sender restarted and resumes at 1026; it declares everything below settled.
        Assert.Equal(1, Run(app, 0, _w.Message(1, 1026, 100, "b")).Held);
        Run(app, 10, AckRequestCodec.Encode(1, 1026, 1026, 1, _w.SenderSigning[1]));
        Assert.Equal(0, app.HeldCount);
        var res = app.TakeOutputs();
        Assert.Equal(1026, res.AckResponses.Single().DeliveredUpTo);
        Assert.Equal(0, res.AckResponses.Single().LossPpm);
        Assert.Equal([1L, 1026L], res.Batches.SelectMany(b => b.Items).Select(i => i.SenderSeq));
    }

    [Fact]
    public void A_reassignment_shows_in_the_read_model_and_is_kept_across_a_snapshot()
    {
        var app = _w.Replica();
        Assert.Empty(app.ReadModel.Assignments);
        Run(app, 0, AckRequestCodec.Encode(1, 0, 1, 1, _w.SenderSigning[1]));
        Assert.Equal(new SenderAssignment(10, 0), app.ReadModel.Assignments[1]);

        // An execution that moves no sender publishes the same map, not a rebuilt one.
        var published = app.ReadModel.Assignments;
        Run(app, 50, _w.Message(2, 1, 100, "a"));
        Assert.Same(published, app.ReadModel.Assignments);

        Run(app, 100, LoadWarningCodec.Encode(new LoadWarning(10, 950)));
        Run(app, 200, AckRequestCodec.Encode(1, 0, 1, 2, _w.SenderSigning[1]));
        Assert.Equal(11, app.AssignedPreSq(1));
        Assert.Equal([1], app.ReadModel.Assignments.Keys);
        Assert.Equal(11, app.ReadModel.Assignments[1].PreSq);

        var restored = _w.Replica();
        restored.RestoreSnapshot(app.TakeSnapshot());
        Assert.Equal(app.ReadModel.Assignments, restored.ReadModel.Assignments);
    }

    [Fact]
    public void Warnreq_moves_senders_away_and_all_warned_asks_for_a_pre_sq()
    {
        var app = _w.Replica();
        Run(app, 0, AckRequestCodec.Encode(1, 0, 1, 1, _w.SenderSigning[1]));
        Assert.Equal(10, app.AssignedPreSq(1));
        Run(app, 100, LoadWarningCodec.Encode(new LoadWarning(10, 950)));
        Run(app, 200, AckRequestCodec.Encode(1, 0, 1, 2, _w.SenderSigning[1]));
        Assert.Equal(11, app.AssignedPreSq(1));
        Assert.Empty(app.TakeOutputs().Notices);
        Run(app, 300, 11, LoadWarningCodec.Encode(new LoadWarning(11, 990)));
        Assert.Equal(ControllerAction.AddPreSq, app.TakeOutputs().Notices.Single().Action);
        // A pre-SQ cannot warn in another's name.
        Assert.Equal(1, Run(app, 400, 11, LoadWarningCodec.Encode(new LoadWarning(10, 1))).Dropped);
    }

    [Fact]
    public void A_tampering_pre_sq_is_quarantined_and_its_traffic_dropped()
    {
        var app = _w.Replica(new ReplicaSieveOptions { PreSqSuspicion = new(QuarantineAt: 50, ReleaseBelow: 10, DecayPerSecond: 1) });
        for (var i = 1; i <= 3; i++)
        {
            var t = _w.Message(2, i, 100, "x");
            t[^1] ^= 1;
            Run(app, 0, 11, t);
        }
        Assert.True(app.IsPreSqQuarantined(11));
        var notices = app.TakeOutputs().Notices;
        Assert.Contains(notices, n => n.Action == ControllerAction.RemovePreSq && n.Subject == 11);
        Assert.Equal(new ExecuteResult(0, 0, 1), Run(app, 0, 11, _w.Message(1, 1, 100, "genuine")));
        // Through the healthy pre-SQ the same message passes; the framed sender is not quarantined.
        Assert.Equal(1, Run(app, 0, 10, _w.Message(1, 1, 100, "genuine")).Accepted);
        Assert.False(app.IsSenderQuarantined(2));
    }

    [Fact]
    public void A_misbehaving_sender_is_quarantined_and_released_after_decay()
    {
        var app = _w.Replica(new ReplicaSieveOptions { SenderSuspicion = new(QuarantineAt: 5, ReleaseBelow: 2, DecayPerSecond: 1), ReplayWeight = 1 });
        var m = _w.Message(3, 1, 100, "x");
        Run(app, 0, m);
        for (var i = 0; i < 5; i++)
        {
            Run(app, 0, m);
        }
        Assert.True(app.IsSenderQuarantined(3));
        Assert.Equal(DropReason.Quarantined, Enum.GetValues<DropReason>().First(r => r == DropReason.Quarantined));
        // Dropped, and the result tells the pre-SQ how long the sender stays quarantined if it sends nothing more:
        // 5 points at 0 ms, 4.9 at 100 ms, released below 2 at 1 point a second, so 2,901 ms on.
        Assert.Equal(new ExecuteResult(0, 0, 1) { Quarantined = [new SenderQuarantineHold(3, 2_901)] }, Run(app, 100, _w.Message(3, 2, 100, "y")));
        Assert.Equal(1, Run(app, 10_000, _w.Message(3, 2, 100, "y")).Accepted);
    }

    [Fact]
    public void Wrong_origin_is_refused_by_verifier_and_execution()
    {
        var app = _w.Replica();
        var payload = OrderingRequestCodec.Encode(11, [_w.Message(1, 1, 100, "x")]);
        var req = new ClientRequest(10, 1, payload);
        Assert.False(app.CreateVerifier().Verify(req));
        Assert.False(app.CreateVerifier().Verify(new ClientRequest(10, 1, [1, 2, 3])));
        var res = ExecuteResultCodec.Decode(app.ExecuteKeepingOutputs(TestWorld.At(1, 0), [req]).Single());
        Assert.Equal(1, res.Dropped);
        // A non-pre-SQ ordering client may submit receiver acks but not sender messages.
        var res2 = ExecuteResultCodec.Decode(app.ExecuteKeepingOutputs(TestWorld.At(2, 0), [TestWorld.Request(100, 1, _w.Message(1, 1, 100, "x"))]).Single());
        Assert.Equal(1, res2.Dropped);
    }

    [Fact]
    public void Verifier_fills_the_cache_and_execution_uses_it_with_the_same_verdicts()
    {
        var cached = _w.Replica();
        var inline = _w.Replica();
        var bad = _w.Message(2, 1, 100, "bad");
        bad[^1] ^= 1;
        var items = Enumerable.Range(1, 40).Select(i => _w.Message(1, i, 100, $"m{i}")).Append(bad).ToArray();
        var req = TestWorld.Request(10, 1, items);
        Assert.True(cached.CreateVerifier(parallelFrom: 8).Verify(req));
        Assert.Equal(41, cached.Verdicts.Count);
        var a = cached.ExecuteKeepingOutputs(TestWorld.At(1, 0), [req]);
        var b = inline.ExecuteKeepingOutputs(TestWorld.At(1, 0), [req]);
        Assert.Equal(a.Single(), b.Single());
        Assert.Equal(41, cached.Verdicts.Hits);
        Assert.Equal(0, inline.Verdicts.Hits);
        Assert.Equal(cached.TakeSnapshot(), inline.TakeSnapshot());
    }

    [Fact]
    public void Payloads_of_authentic_sender_messages_are_prescanned_once_ahead_and_the_result_reaches_the_rules()
    {
        var rules = new PrescanningRules();
        var app = _w.Replica(rules: rules);
        var forged = _w.Message(2, 1, 100, "forged");
        forged[^1] ^= 1;
        // 1..20 in order, 22 ahead of a gap (held, then released by 21 from a later request).
        var items = Enumerable.Range(1, 20).Append(22).Select(i => _w.Message(1, i, 100, $"m{i}")).Append(forged).Append(_w.Message(1, 99, 100, "cut")[..12]).ToArray();
        var req = TestWorld.Request(10, 1, items);
        Assert.True(app.CreateVerifier(parallelFrom: 8).Verify(req));
        // Seen again (a follower gets the leader's PROPOSE after the pre-SQ's copy): verified and scanned once.
        Assert.True(app.CreateVerifier(parallelFrom: 8).Verify(req));
        Assert.Equal(Enumerable.Range(1, 20).Append(22).Select(i => $"m{i}").Order(StringComparer.Ordinal), rules.Prescanned.Order(StringComparer.Ordinal));
        Assert.Equal(20, ExecuteResultCodec.Decode(app.ExecuteKeepingOutputs(TestWorld.At(1, 0), [req]).Single()).Accepted);
        // Not verified ahead: evaluated without a prescan.
        Assert.Equal(1, ExecuteResultCodec.Decode(app.ExecuteKeepingOutputs(TestWorld.At(2, 0), [TestWorld.Request(10, 2, _w.Message(1, 21, 100, "m21"))]).Single()).Accepted);
        var expected = Enumerable.Range(1, 20).Select(i => ($"m{i}", true)).Append(("m21", false)).Append(("m22", true));
        Assert.Equal(expected, rules.Evaluated);
    }

    [Fact]
    public void Body_fetch_is_answered_from_the_queue_with_a_valid_mac_only()
    {
        var app = _w.Replica();
        Run(app, 0, _w.Message(1, 1, 100, "body"));
        var d = TaggedHash.DataDigest("body"u8);
        var ring = _w.ReplicaReceiverRing(2, 100);
        var req = BodyFetchCodec.EncodeRequest(100, 2, 1, [new BodyWanted(1, 1, d), new BodyWanted(1, 2, d)], ring);
        var answer = app.AnswerBodyFetch(req, 2, r => _w.ReplicaReceiverRing(2, r));
        Assert.NotNull(answer);
        var res = BodyFetchCodec.DecodeResponse(answer);
        Assert.Equal("body"u8.ToArray(), res.Items.Single().Body.ToArray());
        Assert.True(BodyFetchCodec.VerifyResponseMac(answer, ring));
        Assert.Null(app.AnswerBodyFetch(req, 1, r => _w.ReplicaReceiverRing(1, r)));
        var bad = req.ToArray();
        bad[^1] ^= 1;
        Assert.Null(app.AnswerBodyFetch(bad, 2, r => _w.ReplicaReceiverRing(2, r)));

        // The unauthenticated half runs without the application (hosts call it off the execution thread).
        Assert.Null(SieveReplicaApplication.AuthenticateBodyFetch(bad, 2, r => _w.ReplicaReceiverRing(2, r), out _, out var why));
        Assert.Equal(DropReason.BadMac, why);
        Assert.Null(SieveReplicaApplication.AuthenticateBodyFetch(new byte[] { 0x21, 1 }, 2, r => _w.ReplicaReceiverRing(2, r), out _, out why));
        Assert.Equal(DropReason.Malformed, why);
        var ok = SieveReplicaApplication.AuthenticateBodyFetch(req, 2, r => _w.ReplicaReceiverRing(2, r), out var okRing, out _);
        Assert.NotNull(ok);
        Assert.NotNull(okRing);
        Assert.Single(app.FindBodies(ok!));
    }

    [Fact]
    public void Designated_replica_rotates_and_only_it_renders_bodies()
    {
        var app = _w.Replica();
        Run(app, 0, _w.Message(1, 1, 100, "x"));
        var batch = app.TakeOutputs().Batches.Single();
        var withBody = Enumerable.Range(0, TestWorld.N)
            .Where(r => ReplicaOutputCodec.Decode(ReplicaOutputRenderer.Render(batch, r, TestWorld.N, _w.ReplicaReceiverRing(r, 100))).Items[0].Body is not null)
            .ToList();
        Assert.Equal([ReplicaOutputRenderer.DesignatedReplica(batch.BatchNo, 100, TestWorld.N)], withBody);
        Assert.NotEqual(ReplicaOutputRenderer.DesignatedReplica(1, 100, 4), ReplicaOutputRenderer.DesignatedReplica(2, 100, 4));
    }

    [Fact]
    public void Fuzzed_payloads_never_throw_and_keep_replicas_identical()
    {
        var a = _w.Replica();
        var b = _w.Replica();
        var seed = OrderingRequestCodec.Encode(10, [_w.Message(1, 1, 100, "x"), AckRequestCodec.Encode(1, 1, 1, 1, _w.SenderSigning[1]), LoadWarningCodec.Encode(new LoadWarning(10, 1))]);
        var rng = new Random(99);
        for (var i = 0; i < 3000; i++)
        {
            var req = new ClientRequest(10, i + 1, EnvelopeTests.Mutate(seed, rng));
            Assert.Equal(a.ExecuteKeepingOutputs(TestWorld.At(i, i), [req]).Single(), b.ExecuteKeepingOutputs(TestWorld.At(i, i), [req]).Single());
        }
        Assert.Equal(a.TakeSnapshot(), b.TakeSnapshot());
    }

    [Fact]
    public void Malformed_snapshot_is_refused_and_leaves_state_alone()
    {
        var app = _w.Replica();
        Run(app, 0, _w.Message(1, 1, 100, "x"));
        var snap = app.TakeSnapshot();
        var rng = new Random(3);
        for (var i = 0; i < 2000; i++)
        {
            var m = EnvelopeTests.Mutate(snap, rng);
            try
            {
                _w.Replica().RestoreSnapshot(m);
            }
            catch (MalformedEnvelopeException)
            {
            }
        }
        Assert.Throws<MalformedEnvelopeException>(() => app.RestoreSnapshot(snap[..^3]));
        Assert.Equal(snap, app.TakeSnapshot());
    }

    /// <summary>Records what it prescanned (a hash of the text as the result) and, per evaluation, whether the matching prescan came along.</summary>
    private sealed class PrescanningRules : IApplicationRules, IPayloadPrescan
    {
        public System.Collections.Concurrent.ConcurrentBag<string> Prescanned { get; } = [];

        public List<(string Text, bool Prescanned)> Evaluated { get; } = [];

        private static ulong Fingerprint(ReadOnlySpan<byte> payload) => BitConverter.ToUInt64(System.Security.Cryptography.SHA256.HashData(payload));

        public PayloadPrescan Prescan(ReadOnlyMemory<byte> payload)
        {
            Prescanned.Add(System.Text.Encoding.UTF8.GetString(payload.Span));
            return new PayloadPrescan(this, Fingerprint(payload.Span));
        }

        public RuleVerdict Evaluate(in RuleInput input)
        {
            var own = ReferenceEquals(input.Prescan.Owner, this);
            Assert.True(!own || input.Prescan.Hits == Fingerprint(input.Data.Span), "a prescan of another payload");
            Evaluated.Add((System.Text.Encoding.UTF8.GetString(input.Data.Span), own));
            return RuleVerdict.Allow;
        }

        public byte[] SnapshotState() => [];

        public void RestoreState(ReadOnlySpan<byte> state)
        {
        }
    }

    private sealed class RecordingRules(List<long> seen) : IApplicationRules
    {
        public RuleVerdict Evaluate(in RuleInput input)
        {
            seen.Add(input.SenderSeq);
            return RuleVerdict.Allow;
        }

        public byte[] SnapshotState() => [];

        public void RestoreState(ReadOnlySpan<byte> state)
        {
        }
    }
}
