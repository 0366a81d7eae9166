using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    /// <summary>
    /// Check (e), then the reorder buffer, then (f). The signature is checked first (its verdict is
    /// already cached, so it costs nothing here) because only a message the sender really signed may
    /// count as the sender's replay or grant overrun: otherwise a faulty pre-SQ could get a correct
    /// sender quarantined by replaying its old messages.
    /// </summary>
    private void AdmitSenderMessage(int origin, ReadOnlyMemory<byte> bytes, ref Tally t)
    {
        SenderMessage m;
        try
        {
            m = SenderMessageCodec.Decode(bytes);
        }
        catch (MalformedEnvelopeException)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t);
            SuspectPreSq(origin, _options.MalformedPreSqWeight);
            return;
        }
        if (!_keys.IsSender(m.Sender))
        {
            // A correct pre-SQ's whitelist (a) would have stopped it.
            Drop(SieveStage.Whitelist, DropReason.NotWhitelisted, ref t);
            SuspectPreSq(origin, _options.MalformedPreSqWeight);
            return;
        }
        if (_admin.QuarantinedSenders.Contains(m.Sender))
        {
            // Not taken, and named as such so the pre-SQ lets the retransmission through after readmission; the
            // pre-SQ holds the sender's frames back for a short while, as long again if it keeps sending.
            RefuseUntaken(DropReason.AdminQuarantined, m, ref t);
            t.SenderQuarantined(m.Sender, _options.AdminQuarantineHoldMs);
            return;
        }
        var s = SenderOf(m.Sender);
        if (s.Suspicion.IsQuarantined(_now, _options.SenderSuspicion))
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.Quarantined, ref t);
            t.SenderQuarantined(m.Sender, Math.Min(s.Suspicion.MsUntilRelease(_now, _options.SenderSuspicion), ExecuteResultCodec.MaxHoldMs));
            return;
        }
        var verdict = _auth.Verify(m, out var prescan);
        if (verdict != SignatureVerdict.Valid)
        {
            Drop(SieveStage.ReplicaAdmission, verdict == SignatureVerdict.BadMerklePath ? DropReason.BadMerklePath : DropReason.BadSignature, ref t);
            SuspectPreSq(origin, _options.BadSignaturePreSqWeight);
            SuspectSenderOfBadSignature(s, m.Sender, origin);
            return;
        }
        switch (s.Window.Probe(m.Seq))
        {
            case SequenceCheck.Replay:
                Drop(SieveStage.ReplicaAdmission, DropReason.Replay, ref t);
                SuspectSender(m.Sender, _options.ReplayWeight);
                return;
            case SequenceCheck.TooOld:
                Drop(SieveStage.ReplicaAdmission, DropReason.TooOld, ref t);
                SuspectSender(m.Sender, _options.ReplayWeight);
                return;
            case SequenceCheck.TooFarAhead:
                Drop(SieveStage.ReplicaAdmission, DropReason.TooFarAhead, ref t);
                SuspectSender(m.Sender, _options.GrantOverrunWeight);
                return;
            default:
                break;
        }
        var expected = s.RuleCursor + 1;
        if (m.Seq > expected && _reorder.Contains(m.Sender, m.Seq))
        {
            // Held already: a retransmission of something not yet taken. Named, so the pre-SQ that passed this copy
            // forgets it: should the held one be let go, a retransmission through that pre-SQ is not refused as a replay.
            RefuseUntaken(DropReason.Replay, m, ref t);
            return;
        }
        if (m.Seq == expected && s.Rejections.Count >= EnvelopeLimits.MaxAckRejections)
        {
            // The sender has not yet heard of its last rejections: taking more could cost a verdict it is owed.
            RefuseUntaken(DropReason.VerdictsUnreported, m, ref t);
            return;
        }
        var known = _keys.IsReceiver(m.Receiver);
        var charged = ReplicaSieveOptions.ChargedBytes(m.Data.Length);
        if (known && !QueueHasRoom(QueueOf(m.Receiver), charged))
        {
            // Back-pressure: not taken (the sender retransmits it later), and the sender's grant shrinks.
            s.Grant.Throttle();
            RefuseUntaken(DropReason.ReceiverQueueFull, m, ref t);
            return;
        }
        if (!s.Grant.TryTake(_now))
        {
            RefuseUntaken(DropReason.GrantExceeded, m, ref t);
            SuspectSender(m.Sender, _options.GrantOverrunWeight);
            return;
        }
        if (m.Seq > expected)
        {
            // Ahead of a gap: held (not yet taken) while it fits, else refused untaken. Never taken past
            // the gap: that would deliver this sender's messages out of order once the gap is filled.
            if (m.Seq - expected <= _options.ReorderThreshold && _reorder.Count < _options.MaxHeldTotal
                && _reorder.Bytes + charged <= _options.MaxHeldBytes && _reorder.BytesOf(m.Sender) + charged <= _options.MaxHeldBytesPerSender)
            {
                _reorder.Hold(new HeldMessage(m.Sender, m.Seq, m.Receiver, m.Data.ToArray(), _processed + _options.ReorderPatience, prescan));
                if (known)
                {
                    var q = QueueOf(m.Receiver);
                    q.Held++;
                    q.HeldBytes += charged;
                }
                t.Held++;
                return;
            }
            RefuseUntaken(DropReason.OutOfOrder, m, ref t);
            return;
        }
        if (Take(s, m.Sender, m.Seq, m.Receiver, m.Data.ToArray(), prescan))
        {
            t.Accepted++;
        }
        else
        {
            t.Dropped++;
        }
        ReleaseConsecutive(s, m.Sender);
    }

    /// <summary>
    /// Takes the sender's next message into agreed state: marks its number, moves the sender's cursor,
    /// and runs (f) for a known receiver. An authentic message for an unknown receiver is taken and
    /// denied, so it is acknowledged and not retransmitted forever. Returns whether it was approved.
    /// </summary>
    private bool Take(SenderRecord s, int sender, long seq, int receiver, byte[] data, PayloadPrescan prescan = default)
    {
        if (s.Window.TryMark(seq) != SequenceCheck.Accepted)
        {
            _drops.Count(SieveStage.ReplicaAdmission, DropReason.Replay);
            return false;
        }
        if (!_keys.IsReceiver(receiver))
        {
            s.RuleCursor = Math.Max(s.RuleCursor, seq);
            _drops.Count(SieveStage.Rules, DropReason.UnknownReceiver);
            s.Reject(seq, RejectionReason.ReceiverNotEnrolled, $"receiver {receiver} is not enrolled");
            return false;
        }
        return ApplyRules(s, sender, seq, receiver, data, prescan);
    }

    /// <summary>Check (f) and, if approved, the receiver queue. Returns whether the message was approved.</summary>
    private bool ApplyRules(SenderRecord s, int sender, long seq, int receiver, byte[] data, PayloadPrescan prescan)
    {
        _processed++;
        s.RuleCursor = Math.Max(s.RuleCursor, seq);
        var verdict = _rules.Evaluate(new RuleInput(_now, sender, seq, receiver, data, prescan));
        if (!verdict.Allowed)
        {
            _drops.Count(SieveStage.Rules, DropReason.RuleDenied);
            _ruleDenials.Count(verdict.Reason);
            s.Reject(seq, RejectionReason.RuleDenied, verdict.Reason ?? "denied");
            return false;
        }
        var item = QueueOf(receiver).Enqueue(sender, seq, data);
        if (!_pendingOutputs.TryGetValue(receiver, out var list))
        {
            list = [];
            _pendingOutputs.Add(receiver, list);
        }
        list.Add(item);
        SieveMetrics.Pass(Component);
        return true;
    }

    private void ReleaseConsecutive(SenderRecord s, int sender)
    {
        foreach (var h in _reorder.TakeConsecutive(sender, s.RuleCursor + 1))
        {
            Release(s, h);
        }
    }

    /// <summary>
    /// A bad signature is evidence against the pre-SQ that forwarded it or against the sender: a replica
    /// cannot tell which. One pre-SQ alone only ever counts against itself, or a faulty pre-SQ could get
    /// a correct sender quarantined (and its traffic refused everywhere) by flipping bits. Bad signatures
    /// in the sender's name through two different pre-SQs count against the sender too.
    /// </summary>
    private void SuspectSenderOfBadSignature(SenderRecord s, int sender, int origin)
    {
        if (s.LastBadSignatureOrigin >= 0 && s.LastBadSignatureOrigin != origin)
        {
            SuspectSender(sender, _options.BadSignatureSenderWeight);
        }
        s.LastBadSignatureOrigin = origin;
    }

    /// <summary>Takes what the sender held below <paramref name="below"/>: the sender said the numbers missing there will not come.</summary>
    private void ReleaseAll(int sender, long below)
    {
        var s = _senders[sender];
        while (_reorder.TakeLowest(sender, below) is { } h)
        {
            Release(s, h);
        }
    }

    /// <summary>
    /// Gives up waiting (4.3.3 case 2) for every sender whose oldest held message ran out of patience. Unlike
    /// the paper, the held messages are let go untaken rather than checked past the gap: each sender's
    /// messages reach the rules and the receiver in sequence order, and the sender, which has no
    /// acknowledgement for them, sends them again. Patience bounds how long a gap that never fills (a
    /// faulty sender's) occupies the buffer. They are named untaken in the result of the request that let them go: the
    /// pre-SQ that passed them marked them seen, and with no other pre-SQ left to try (one pre-SQ, or every one passed a
    /// copy) the sender's retransmissions were refused there as replays for good. The result reaches the requesting
    /// pre-SQ only; a held message's own pre-SQ is told when its request is the one (always so with one pre-SQ), and
    /// the others that passed a copy were told when it reached the replicas (<see cref="AdmitSenderMessage"/>).
    /// </summary>
    private void ReleaseExpired(ref Tally t)
    {
        while (_reorder.TakeExpired(_processed) is { } list)
        {
            foreach (var h in list)
            {
                Unreserve(h);
                _drops.Count(SieveStage.ReplicaAdmission, DropReason.GapTimedOut);
                t.RefusedUntaken(h.Sender, h.Seq);
            }
        }
    }

    private void Release(SenderRecord s, HeldMessage h)
    {
        Unreserve(h);
        Take(s, h.Sender, h.Seq, h.Receiver, h.Data, h.Prescan);
    }

    /// <summary>Refused without being taken: counted, and named in the agreed result so the pre-SQ lets its retransmission through.</summary>
    private void RefuseUntaken(DropReason reason, SenderMessage m, ref Tally t)
    {
        Drop(SieveStage.ReplicaAdmission, reason, ref t);
        t.RefusedUntaken(m.Sender, m.Seq);
    }

    /// <summary>A held message leaves the buffer: the room it reserved in its receiver's queue is given back.</summary>
    private void Unreserve(HeldMessage h)
    {
        if (_keys.IsReceiver(h.Receiver))
        {
            var q = QueueOf(h.Receiver);
            q.Held--;
            q.HeldBytes -= ReplicaSieveOptions.ChargedBytes(h.Data.Length);
        }
    }

    /// <summary>
    /// The size rule before holding or taking: the receiver's queue by count and bytes, and all queues together by
    /// bytes. A message refused here is not taken; its sender keeps it and sends it again once acknowledgements
    /// made room, so nothing accepted is lost and the agreed state stays inside <see cref="SieveStateBudget"/>.
    /// </summary>
    private bool QueueHasRoom(ReceiverQueue q, long charged) =>
        q.Occupancy < _options.ReceiverQueueCapacity
        && q.OccupancyBytes + charged <= _options.ReceiverQueueBytes
        && QueuedBytes() + charged <= _options.QueuedBytesTotal;

    private long QueuedBytes()
    {
        long total = 0;
        foreach (var q in _receivers.Values)
        {
            total += q.OccupancyBytes;
        }
        return total;
    }
}
