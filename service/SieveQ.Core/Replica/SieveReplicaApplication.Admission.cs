using SieveQ.Core.Envelope;
using SieveQ.Core.Filtering;

namespace SieveQ.Core.Replica;

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
        var s = SenderOf(m.Sender);
        if (s.Suspicion.IsQuarantined(_now, _options.SenderSuspicion))
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.Quarantined, ref t);
            return;
        }
        var verdict = _auth.Verify(m);
        if (verdict != SignatureVerdict.Valid)
        {
            Drop(SieveStage.ReplicaAdmission, verdict == SignatureVerdict.BadMerklePath ? DropReason.BadMerklePath : DropReason.BadSignature, ref t);
            SuspectPreSq(origin, _options.BadSignaturePreSqWeight);
            SuspectSender(m.Sender, _options.BadSignatureSenderWeight);
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
        if (!_keys.IsReceiver(m.Receiver))
        {
            // Authentic but undeliverable: taken (so it is acknowledged and not retransmitted forever) and denied.
            s.Window.TryMark(m.Seq);
            Drop(SieveStage.Rules, DropReason.UnknownReceiver, ref t);
            return;
        }
        var q = QueueOf(m.Receiver);
        if (q.Occupancy >= _options.ReceiverQueueCapacity)
        {
            // Back-pressure: not taken (the sender retransmits it later), and the sender's grant shrinks.
            s.Grant.Throttle();
            Drop(SieveStage.ReplicaAdmission, DropReason.ReceiverQueueFull, ref t);
            return;
        }
        if (!s.Grant.TryTake(_now))
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.GrantExceeded, ref t);
            SuspectSender(m.Sender, _options.GrantOverrunWeight);
            return;
        }
        s.Window.TryMark(m.Seq);
        var expected = s.RuleCursor + 1;
        if (m.Seq > expected && m.Seq - expected <= _options.ReorderThreshold && _reorder.Count < _options.MaxHeldTotal)
        {
            _reorder.Hold(new HeldMessage(m.Sender, m.Seq, m.Receiver, m.Data.ToArray(), _processed + _options.ReorderPatience));
            q.Held++;
            t.Held++;
            return;
        }
        if (m.Seq > expected)
        {
            // Too far ahead to hold (or the buffer is full): what this sender has held goes first, in order.
            ReleaseAll(m.Sender, below: m.Seq);
        }
        if (ApplyRules(s, m.Sender, m.Seq, m.Receiver, m.Data.ToArray()))
        {
            t.Accepted++;
        }
        else
        {
            t.Dropped++;
        }
        ReleaseConsecutive(s, m.Sender);
    }

    /// <summary>Check (f) and, if approved, the receiver queue. Returns whether the message was approved.</summary>
    private bool ApplyRules(SenderRecord s, int sender, long seq, int receiver, byte[] data)
    {
        _processed++;
        s.RuleCursor = Math.Max(s.RuleCursor, seq);
        var verdict = _rules.Evaluate(new RuleInput(_now, sender, seq, receiver, data));
        if (!verdict.Allowed)
        {
            _drops.Count(SieveStage.Rules, DropReason.RuleDenied);
            _ruleDenials.Count(verdict.Reason);
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

    private void ReleaseAll(int sender, long below)
    {
        var s = _senders[sender];
        while (_reorder.TakeLowest(sender, below) is { } h)
        {
            Release(s, h);
        }
    }

    /// <summary>Gives up waiting (4.3.3 case 2) for every sender whose oldest held message ran out of patience.</summary>
    private void ReleaseExpired()
    {
        while (_reorder.TakeExpired(_processed) is { } list)
        {
            var s = _senders[list[0].Sender];
            foreach (var h in list)
            {
                Release(s, h);
            }
            ReleaseConsecutive(s, list[0].Sender);
        }
    }

    private void Release(SenderRecord s, HeldMessage h)
    {
        QueueOf(h.Receiver).Held--;
        ApplyRules(s, h.Sender, h.Seq, h.Receiver, h.Data);
    }
}
