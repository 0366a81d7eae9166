using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.PreSq;
using SieveQ.Sieve.Receiver;
using SieveQ.Sieve.Replica;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sieve.Tests;

public sealed class SenderSqTests : IClassFixture<TestWorld>
{
    private readonly TestWorld _w;

    public SenderSqTests(TestWorld w) => _w = w;

    private SenderSq Sender(int id = 1, SenderSqOptions? o = null, ISequenceStore? store = null) =>
        new(id, _w.SenderSigning[id], new SenderSequencer(store ?? new InMemorySequenceStore()), TestWorld.PreSqIds, 10, TestWorld.F,
            p => _w.SenderPreSqRing(id, p), r => _w.ReplicaSenderRing(r, id), o);

    private byte[] AckRes(int replica, int sender, long delivered, int assigned, long nonce, int loss = 0) =>
        AckResponseCodec.Encode(replica, sender, loss, delivered, assigned, nonce, _w.ReplicaSenderRing(replica, sender));

    [Fact]
    public void Flush_signs_a_batch_and_frames_it_for_the_assigned_pre_sq()
    {
        var s = Sender();
        for (var i = 0; i < 5; i++)
        {
            Assert.True(s.TryEnqueue(100, [(byte)i], out var seq));
            Assert.Equal(i + 1, seq);
        }
        var frames = s.Flush(0);
        Assert.Equal(5, frames.Count);
        var check = new SenderSignatureCheck(_w.Keys);
        var filter = new PreSqFilter(10, new PreSqOptions(), new SenderWhitelist([1]), p => _w.SenderPreSqRing(p, 10));
        foreach (var f in frames)
        {
            Assert.Equal(10, f.PreSq);
            var v = filter.Inspect(f.Frame, 0);
            Assert.True(v.Passed);
            var m = SenderMessageCodec.Decode(v.Body);
            Assert.Equal(SenderAuthKind.Batch, m.Auth.Kind);
            Assert.Equal(SignatureVerdict.Valid, check.Verify(m));
        }
        Assert.Equal(5, s.Outstanding);
    }

    [Fact]
    public void The_outstanding_window_is_back_pressure()
    {
        var s = Sender(o: new SenderSqOptions { MaxOutstanding = 3 });
        Assert.True(s.TryEnqueue(100, [1], out _));
        Assert.True(s.TryEnqueue(100, [2], out _));
        s.Flush(0);
        Assert.True(s.TryEnqueue(100, [3], out _));
        Assert.False(s.TryEnqueue(100, [4], out _));
    }

    [Fact]
    public void Time_out_retransmits_through_another_pre_sq_with_growing_waits()
    {
        var s = Sender(o: new SenderSqOptions { RetransmitAfterMs = 100, AckRequestIntervalMs = 1_000_000, AckResponseWaitMs = 1_000_000 });
        s.TryEnqueue(100, [1], out _);
        s.Flush(0);
        var first = s.Tick(0);
        Assert.Single(first); // the initial ACKREQ
        Assert.DoesNotContain(s.Tick(99), f => SenderFrameCodec.Decode(f.Frame).BodyKind == StructureKind.SenderMessage);
        var re = s.Tick(100).Where(f => SenderFrameCodec.Decode(f.Frame).BodyKind == StructureKind.SenderMessage).ToList();
        Assert.Equal(11, re.Single().PreSq);
        Assert.True(SenderFrameCodec.VerifyMac(re[0].Frame, _w.SenderPreSqRing(1, 11)));
        Assert.Empty(s.Tick(250));
        var again = s.Tick(300).Single();
        Assert.Equal(10, again.PreSq);
    }

    [Fact]
    public void A_message_sent_before_the_replicas_moved_the_sender_is_retransmitted_through_the_new_pre_sq()
    {
        var s = Sender(o: new SenderSqOptions { RetransmitAfterMs = 100, AckRequestIntervalMs = 1_000_000, AckResponseWaitMs = 1_000_000 });
        static List<int> Resent(IReadOnlyList<OutgoingFrame> frames) =>
            [.. frames.Where(f => SenderFrameCodec.Decode(f.Frame).BodyKind == StructureKind.SenderMessage).Select(f => f.PreSq)];
        s.TryEnqueue(100, [1], out _);
        s.Flush(0);
        var req = AckRequestCodec.Decode(SenderFrameCodec.Decode(s.Tick(0).Single().Frame).Body);
        // Pre-SQ 10 lost it: the time-out sends it through 11.
        Assert.Equal([11], Resent(s.Tick(100)));
        // The replicas move the sender to 11 before that copy is acknowledged (it was slow, not lost).
        s.OnAckResponse(AckRes(0, 1, 0, 11, req.Nonce), 150);
        Assert.True(s.OnAckResponse(AckRes(1, 1, 0, 11, req.Nonce), 150).Reassigned);
        // Rotating from 11 sent the next copy back to 10, the pre-SQ the sender was moved off; it goes through 11.
        Assert.Equal([11], Resent(s.Tick(300)));
        // Sent through 11 since the move and still not acknowledged: now the rotation goes on to another pre-SQ.
        Assert.Equal([10], Resent(s.Tick(700)));
    }

    [Fact]
    public void Acknowledgements_that_keep_moving_hold_back_retransmission_and_the_time_out_adapts_to_their_delay()
    {
        var s = Sender(o: new SenderSqOptions { RetransmitAfterMs = 100, AckRequestIntervalMs = 1_000_000, AckResponseWaitMs = 1_000_000 });
        for (var i = 0; i < 4; i++)
        {
            s.TryEnqueue(100, [(byte)i], out _);
        }
        s.Flush(0);
        var req = AckRequestCodec.Decode(SenderFrameCodec.Decode(s.Tick(0).Single().Frame).Body);
        Assert.Equal(100, s.RetransmitTimeoutMs);
        // Messages 1 and 2 are acknowledged 90 ms after they went out: the first delay sample.
        s.OnAckResponse(AckRes(0, 1, 2, 10, req.Nonce), 90);
        s.OnAckResponse(AckRes(1, 1, 2, 10, req.Nonce), 90);
        Assert.Equal(2, s.AcknowledgedUpTo);
        Assert.Equal(90 + 4 * 45, s.RetransmitTimeoutMs);
        // 3 and 4 are past their first deadline, but acknowledgements moved 60 ms ago: queued, not lost.
        Assert.DoesNotContain(s.Tick(150), f => SenderFrameCodec.Decode(f.Frame).BodyKind == StructureKind.SenderMessage);
        Assert.Equal(0, s.Retransmissions);
        Assert.DoesNotContain(s.Tick(359), f => SenderFrameCodec.Decode(f.Frame).BodyKind == StructureKind.SenderMessage);
        // One whole time-out without progress: they go again, through the other pre-SQ.
        var re = s.Tick(360).Where(f => SenderFrameCodec.Decode(f.Frame).BodyKind == StructureKind.SenderMessage).ToList();
        Assert.Equal(2, re.Count);
        Assert.All(re, f => Assert.Equal(11, f.PreSq));
        Assert.Equal(2, s.Retransmissions);
    }

    [Fact]
    public void Messages_held_behind_a_retransmitted_one_are_no_delay_sample()
    {
        // 2 is lost; the round after progress resends 2 and 3 (twice the first budget); 4, sent once, waits at the
        // replicas behind 2 and is acknowledged with it. Its delay is the time-out's, not the sieve's: sampled, it
        // kept the time-out at its maximum for good.
        var s = Sender(o: new SenderSqOptions { MaxBatch = 1, RetransmitAfterMs = 100, AckRequestIntervalMs = 1_000, AckResponseWaitMs = 1_000_000 });
        for (var i = 0; i < 4; i++)
        {
            s.TryEnqueue(100, [(byte)i], out _);
        }
        s.Flush(0);
        var first = AckRequestCodec.Decode(SenderFrameCodec.Decode(s.Tick(0).Single().Frame).Body);
        s.OnAckResponse(AckRes(0, 1, 1, 10, first.Nonce), 90);
        s.OnAckResponse(AckRes(1, 1, 1, 10, first.Nonce), 90);
        Assert.Equal(90 + 4 * 45, s.RetransmitTimeoutMs);
        var resent = s.Tick(360).Select(f => SenderFrameCodec.Decode(f.Frame)).Where(f => f.BodyKind == StructureKind.SenderMessage)
            .Select(f => SenderMessageCodec.Decode(f.Body).Seq).ToList();
        Assert.Equal([2L, 3L], resent);
        s.OnAckResponse(AckRes(2, 1, 4, 10, first.Nonce), 2_000);
        s.OnAckResponse(AckRes(3, 1, 4, 10, first.Nonce), 2_000);
        Assert.Equal(4, s.AcknowledgedUpTo);
        Assert.Equal(90 + 4 * 45, s.RetransmitTimeoutMs);

        // A message acknowledged on its own merits is sampled again: 50 ms brings the time-out down.
        s.TryEnqueue(100, [9], out _);
        s.Flush(2_000);
        var second = s.Tick(2_000).Select(f => SenderFrameCodec.Decode(f.Frame)).Single(f => f.BodyKind == StructureKind.AckRequest);
        var nonce = AckRequestCodec.Decode(second.Body).Nonce;
        s.OnAckResponse(AckRes(0, 1, 5, 10, nonce), 2_050);
        s.OnAckResponse(AckRes(1, 1, 5, 10, nonce), 2_050);
        Assert.Equal(5, s.AcknowledgedUpTo);
        Assert.Equal(85 + 4 * 43, s.RetransmitTimeoutMs);
    }

    [Fact]
    public void A_time_out_resends_only_a_budget_of_the_lowest_messages_and_the_budget_grows_with_progress()
    {
        var s = Sender(o: new SenderSqOptions { MaxBatch = 4, RetransmitAfterMs = 100, AckRequestIntervalMs = 1_000_000, AckResponseWaitMs = 1_000_000 });
        for (var i = 0; i < 20; i++)
        {
            s.TryEnqueue(100, [(byte)i], out _);
        }
        s.Flush(0);
        var req = AckRequestCodec.Decode(SenderFrameCodec.Decode(s.Tick(0).Single().Frame).Body);
        static List<long> Resent(IReadOnlyList<OutgoingFrame> frames) =>
            frames.Select(f => SenderFrameCodec.Decode(f.Frame)).Where(f => f.BodyKind == StructureKind.SenderMessage)
                .Select(f => SenderMessageCodec.Decode(f.Body).Seq).ToList();
        // Nothing acknowledged by the time-out: the 4 lowest go again, not the whole window.
        Assert.Equal([1L, 2, 3, 4], Resent(s.Tick(100)));
        // They arrive: progress, so the next round may resend twice as many.
        s.OnAckResponse(AckRes(0, 1, 4, 10, req.Nonce), 150);
        s.OnAckResponse(AckRes(1, 1, 4, 10, req.Nonce), 150);
        Assert.Empty(Resent(s.Tick(200)));
        var second = Resent(s.Tick(2_000));
        Assert.Equal([5L, 6, 7, 8, 9, 10, 11, 12], second);
        // A round without progress falls back to the first budget and waits twice as long.
        Assert.Empty(Resent(s.Tick(2_000 + 2 * s.RetransmitTimeoutMs - 1)));
        Assert.Equal(4, Resent(s.Tick(2_000 + 2 * s.RetransmitTimeoutMs)).Count);
    }

    [Fact]
    public void Messages_that_come_due_at_different_times_share_one_retransmission_round()
    {
        var s = Sender(o: new SenderSqOptions { MaxBatch = 2, RetransmitAfterMs = 100, AckRequestIntervalMs = 1_000_000, AckResponseWaitMs = 1_000_000 });
        s.TryEnqueue(100, [1], out _);
        s.Flush(0);
        s.Tick(0);
        s.TryEnqueue(100, [2], out _);
        s.TryEnqueue(100, [3], out _);
        s.Flush(50);
        static int Resent(IReadOnlyList<OutgoingFrame> frames) => frames.Count(f => SenderFrameCodec.Decode(f.Frame).BodyKind == StructureKind.SenderMessage);
        Assert.Equal(1, Resent(s.Tick(100)));
        // 2 and 3 come due at 150, but a round went out at 100: they wait for the next one (at 100 + 2 x 100).
        Assert.Equal(0, Resent(s.Tick(150)));
        Assert.Equal(0, Resent(s.Tick(299)));
        Assert.Equal(2, Resent(s.Tick(300)));
    }

    [Fact]
    public void Acknowledgement_needs_f_plus_1_replicas_and_releases_the_window()
    {
        var s = Sender(o: new SenderSqOptions { AckRequestIntervalMs = 10 });
        for (var i = 0; i < 4; i++)
        {
            s.TryEnqueue(100, [(byte)i], out _);
        }
        s.Flush(0);
        var ack = s.Tick(0).Single();
        var req = AckRequestCodec.Decode(SenderFrameCodec.Decode(ack.Frame).Body);
        Assert.Equal((4L, 1L), (req.LastSentSeq, req.LowestPending));
        // One (possibly lying) replica claims everything: not enough; nor is one other replica saying something else.
        Assert.True(s.OnAckResponse(AckRes(0, 1, 4, 10, req.Nonce), 1).Accepted);
        Assert.Equal(0, s.AcknowledgedUpTo);
        s.OnAckResponse(AckRes(1, 1, 2, 10, req.Nonce), 1);
        Assert.Equal(0, s.AcknowledgedUpTo);
        // f+1 replicas making the same statement in answer to the same ACKREQ: believed.
        s.OnAckResponse(AckRes(3, 1, 2, 10, req.Nonce), 1);
        Assert.Equal(2, s.AcknowledgedUpTo);
        Assert.Equal(2, s.Outstanding);
        // A response with a bad MAC, another sender's, or for a nonce never issued is refused.
        Assert.False(s.OnAckResponse(AckResponseCodec.Encode(2, 1, 0, 4, 10, req.Nonce, _w.ReplicaSenderRing(3, 1)), 1).Accepted);
        Assert.False(s.OnAckResponse(AckRes(2, 2, 4, 10, req.Nonce), 1).Accepted);
        Assert.False(s.OnAckResponse(AckRes(2, 1, 4, 10, req.Nonce + 5), 1).Accepted);
    }

    [Fact]
    public void Reassignment_is_obeyed_only_when_f_plus_1_replicas_agree()
    {
        var s = Sender();
        s.TryEnqueue(100, [1], out _);
        s.Flush(0);
        var req = AckRequestCodec.Decode(SenderFrameCodec.Decode(s.Tick(0).Single().Frame).Body);
        Assert.False(s.OnAckResponse(AckRes(3, 1, 0, 11, req.Nonce), 1).Reassigned);
        Assert.Equal(10, s.AssignedPreSq);
        var o = s.OnAckResponse(AckRes(0, 1, 0, 11, req.Nonce, loss: 500_000), 1);
        Assert.True(o.Reassigned);
        Assert.Equal(11, s.AssignedPreSq);
        Assert.Equal(500_000, o.AgreedLossPpm);
        s.TryEnqueue(100, [2], out _);
        Assert.All(s.Flush(2), f => Assert.Equal(11, f.PreSq));
    }

    [Fact]
    public void Unanswered_ackreq_goes_to_another_pre_sq_with_doubling_wait()
    {
        var s = Sender(o: new SenderSqOptions { AckResponseWaitMs = 100, RetransmitAfterMs = 1_000_000 });
        s.TryEnqueue(100, [1], out _);
        s.Flush(0);
        var a1 = s.Tick(0).Single();
        Assert.Equal(10, a1.PreSq);
        Assert.Empty(s.Tick(99));
        var a2 = s.Tick(100).Single();
        Assert.Equal(11, a2.PreSq);
        Assert.Empty(s.Tick(299));
        var a3 = s.Tick(300).Single();
        Assert.Empty(s.Tick(699));
        Assert.Single(s.Tick(700));
        Assert.Equal(10, a3.PreSq);
        var n1 = AckRequestCodec.Decode(SenderFrameCodec.Decode(a1.Frame).Body).Nonce;
        var n3 = AckRequestCodec.Decode(SenderFrameCodec.Decode(a3.Frame).Body).Nonce;
        Assert.True(n3 > n1);
    }

    [Fact]
    public void A_restarted_sender_resumes_above_everything_and_its_nonces_keep_growing()
    {
        var store = new InMemorySequenceStore();
        var s1 = Sender(store: store);
        s1.TryEnqueue(100, [1], out var seq1);
        s1.Flush(0);
        var n1 = AckRequestCodec.Decode(SenderFrameCodec.Decode(s1.Tick(0).Single().Frame).Body).Nonce;
        var s2 = Sender(store: store);
        s2.TryEnqueue(100, [2], out var seq2);
        s2.Flush(0);
        Assert.True(seq2 > seq1 + 1);
        var req = AckRequestCodec.Decode(SenderFrameCodec.Decode(s2.Tick(0).Single().Frame).Body);
        Assert.True(req.Nonce > n1);
        Assert.Equal(seq2, req.LowestPending);
    }

    /// <summary>
    /// A sender killed with every message it numbered sent, restarted on its outbox with nothing new to send: its restored
    /// messages are acknowledged, and then the numbers its crash skipped (the rest of the reserved block, up to its first
    /// number of the new run) must still be settled by an ACKREQ whose lowestPending is above them. Before, the sender
    /// stopped asking once nothing was outstanding, so its last number was never acknowledged and WaitAcknowledgedAsync
    /// hung for good (SenderCrashTests, every replica-SQ killed: 1 run in 3).
    /// </summary>
    [Fact]
    public void A_restarted_sender_with_only_restored_messages_settles_the_numbers_its_crash_skipped()
    {
        var store = new InMemorySequenceStore();
        var s1 = Sender(store: store);
        for (var i = 1; i <= 3; i++)
        {
            s1.TryEnqueue(100, [(byte)i], out _);
        }
        s1.Flush(0);
        var options = new SenderSqOptions { AckRequestIntervalMs = 50, AckResponseWaitMs = 100, RetransmitAfterMs = 1_000_000 };
        var s2 = Sender(store: store, o: options);
        var last = s2.LastSentSeq;
        Assert.True(last > 3, "the restart skips the rest of the first run's block");
        s2.Restore([(2, 100, [2]), (3, 100, [3])], 0);
        var first = AckRequestCodec.Decode(SenderFrameCodec.Decode(s2.Tick(0).Single(f => SenderFrameCodec.Decode(f.Frame).BodyKind == StructureKind.AckRequest).Frame).Body);
        Assert.Equal(2, first.LowestPending);
        s2.OnAckResponse(AckRes(0, 1, 3, 10, first.Nonce), 10);
        s2.OnAckResponse(AckRes(1, 1, 3, 10, first.Nonce), 10);
        Assert.Equal(3, s2.AcknowledgedUpTo);
        Assert.Equal(0, s2.Outstanding);

        // Nothing outstanding, but 4..last are neither acknowledged nor coming: the next ACKREQ says so.
        Assert.NotNull(s2.NextWakeupMs);
        var settle = AckRequestCodec.Decode(SenderFrameCodec.Decode(s2.Tick(50).Single().Frame).Body);
        Assert.Equal(last + 1, settle.LowestPending);
        Assert.Equal(last, settle.LastSentSeq);
        s2.OnAckResponse(AckRes(0, 1, last, 10, settle.Nonce), 60);
        s2.OnAckResponse(AckRes(1, 1, last, 10, settle.Nonce), 60);
        Assert.Equal(last, s2.AcknowledgedUpTo);

        // Settled: no more ACKREQs while idle.
        Assert.Null(s2.NextWakeupMs);
        Assert.Empty(s2.Tick(10_000));
    }

    /// <summary>The whole path: sender-SQ, pre-SQ, batcher, 4 replica applications (one lying at the output), post-SQ.</summary>
    [Fact]
    public void End_to_end_through_every_stage()
    {
        var sender = Sender(o: new SenderSqOptions { MaxBatch = 16 });
        var filter = new PreSqFilter(10, new PreSqOptions(), new SenderWhitelist([1, 2, 3]), p => _w.SenderPreSqRing(p, 10));
        using var batcher = new OrderingBatcher(10, new PreSqOptions { BatchMaxItems = 32 });
        var replicas = Enumerable.Range(0, TestWorld.N).Select(_ => _w.Replica()).ToList();
        var verifiers = replicas.Select(r => r.CreateVerifier()).ToList();
        var voter = new PostSqVoter(100, TestWorld.F, r => _w.ReplicaReceiverRing(r, 100), new InMemoryDeliveryCursorStore());
        var delivered = new List<Delivery>();
        var expected = new List<byte[]>();
        long cid = 0;
        long reqSeq = 0;
        void Order(byte[] payload, long now)
        {
            var req = new Bft.Protocol.ClientRequest(10, ++reqSeq, payload);
            cid++;
            for (var r = 0; r < TestWorld.N; r++)
            {
                Assert.True(verifiers[r].Verify(req));
                var outbox = OutboxContents.Of(replicas[r].Execute(TestWorld.At(cid, now), [req]));
                foreach (var b in outbox.Batches)
                {
                    var bytes = ReplicaOutputRenderer.Render(b, r, TestWorld.N, _w.ReplicaReceiverRing(r, 100));
                    if (r == 3)
                    {
                        // Replica 3 is compromised: it flips a byte of every body it sends (its MAC is still valid).
                        var o = ReplicaOutputCodec.Decode(bytes);
                        var items = o.Items.Select(i => i with { Body = i.Body is { } bb ? bb.ToArray().Select(x => (byte)(x ^ 1)).ToArray() : null }).ToList();
                        bytes = ReplicaOutputCodec.Encode(3, 100, o.BatchNo, items, _w.ReplicaReceiverRing(3, 100));
                    }
                    var step = voter.OnReplicaOutput(bytes, now);
                    delivered.AddRange(step.Deliveries);
                    foreach (var f in step.Fetches)
                    {
                        var answer = replicas[f.Replica].AnswerBodyFetch(f.Request, f.Replica, rc => _w.ReplicaReceiverRing(f.Replica, rc));
                        delivered.AddRange(voter.OnBodyFetchResponse(answer!, now).Deliveries);
                    }
                }
                foreach (var a in outbox.AckResponses)
                {
                    sender.OnAckResponse(ReplicaOutputRenderer.Render(a, r, _w.ReplicaSenderRing(r, 1)), now);
                }
            }
        }
        var rng = new Random(3);
        long t = 0;
        for (var round = 0; round < 20; round++)
        {
            t += 10;
            for (var k = 0; k < 10; k++)
            {
                var data = new byte[rng.Next(1, 100)];
                rng.NextBytes(data);
                Assert.True(sender.TryEnqueue(100, data, out _));
                expected.Add(data);
            }
            foreach (var f in sender.Flush(t).Concat(sender.Tick(t)))
            {
                var v = filter.Inspect(f.Frame, t);
                Assert.True(v.Passed);
                if (batcher.Add(v.Body.Span, t) is { } payload)
                {
                    Order(payload, t);
                }
            }
            if (batcher.Poll(t + 100) is { } late)
            {
                Order(late, t);
            }
        }
        // Let fetch grace periods pass for anything replica 3 was designated for.
        for (var i = 0; i < 5; i++)
        {
            t += 300;
            foreach (var f in voter.Tick(t))
            {
                var answer = replicas[f.Replica].AnswerBodyFetch(f.Request, f.Replica, rc => _w.ReplicaReceiverRing(f.Replica, rc));
                delivered.AddRange(voter.OnBodyFetchResponse(answer!, t).Deliveries);
            }
            foreach (var f in sender.Tick(t))
            {
                var v = filter.Inspect(f.Frame, t);
                if (v.Passed && batcher.Add(v.Body.Span, t) is { } p)
                {
                    Order(p, t);
                }
            }
            if (batcher.Flush() is { } rest)
            {
                Order(rest, t);
            }
        }
        Assert.Equal(expected.Count, delivered.Count);
        Assert.Equal(expected, delivered.Select(d => d.Data.ToArray()));
        Assert.Equal(Enumerable.Range(1, expected.Count).Select(i => (long)i), delivered.Select(d => d.SenderSeq));
        Assert.Equal(expected.Count, sender.AcknowledgedUpTo);
        Assert.Equal(0, sender.Outstanding);
        Assert.True(voter.Drops.ByReason(DropReason.BodyMismatch) > 0);
        var snaps = replicas.Select(r => Convert.ToHexString(r.TakeSnapshot())).Distinct().Count();
        Assert.Equal(1, snaps);
    }
}
