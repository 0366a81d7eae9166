using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    /// <summary>
    /// ACKREQ (paper 4.4.2, steps 2 and 3): loss rate over the numbers the sender says it sent since
    /// its last answered ACKREQ, its acknowledged prefix, and its pre-SQ assignment, possibly moved.
    /// </summary>
    private void HandleAckRequest(int origin, ReadOnlyMemory<byte> bytes, ref Tally t)
    {
        AckRequest a;
        try
        {
            a = AckRequestCodec.Decode(bytes);
        }
        catch (MalformedEnvelopeException)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t);
            SuspectPreSq(origin, _options.MalformedPreSqWeight);
            return;
        }
        if (!_keys.IsSender(a.Sender))
        {
            Drop(SieveStage.Whitelist, DropReason.NotWhitelisted, ref t);
            SuspectPreSq(origin, _options.MalformedPreSqWeight);
            return;
        }
        if (_admin.QuarantinedSenders.Contains(a.Sender))
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.AdminQuarantined, ref t);
            return;
        }
        var s = SenderOf(a.Sender);
        if (s.Suspicion.IsQuarantined(_now, _options.SenderSuspicion))
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.Quarantined, ref t);
            return;
        }
        if (_auth.Verify(a, bytes) != SignatureVerdict.Valid)
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.BadSignature, ref t);
            SuspectPreSq(origin, _options.BadSignaturePreSqWeight);
            SuspectSenderOfBadSignature(s, a.Sender, origin);
            return;
        }
        if (a.Nonce <= s.LastAckNonce)
        {
            // Also the normal fate of an ACKREQ the sender retransmitted through a second pre-SQ.
            Drop(SieveStage.ReplicaAdmission, DropReason.StaleNonce, ref t);
            return;
        }
        if (_now - s.LastAckTimeMs < _options.MinAckRequestIntervalMs)
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.GrantExceeded, ref t);
            return;
        }
        s.LastAckNonce = a.Nonce;
        s.LastAckTimeMs = _now;
        // Settle what the sender no longer waits for before measuring loss, so it is not counted lost.
        s.Window.Abandon(a.LowestPending);
        if (a.LowestPending - 1 > s.RuleCursor)
        {
            // Nothing below will come: stop holding this sender's later messages for it.
            ReleaseAll(a.Sender, below: a.LowestPending);
            s.RuleCursor = Math.Max(s.RuleCursor, a.LowestPending - 1);
            ReleaseConsecutive(s, a.Sender);
        }
        var (loss, fresh) = MeasureLoss(s, a.Sender, a.LastSentSeq);
        var assigned = Reassign(s, origin, lossy: fresh && loss >= _options.ReassignLossPpm);
        NoteAssignment(a.Sender, s);
        s.ForgetVerdictsBelow(a.LowestPending);
        var delivered = s.Window.ContiguousUpTo;
        var verdictsFrom = Math.Min(Math.Max(a.LowestPending, s.VerdictsLostUpTo + 1), delivered + 1);
        var rejections = s.Rejections.Where(j => j.Seq >= verdictsFrom && j.Seq <= delivered).ToArray();
        _outbox.Add(new OutboxAckResponse(a.Sender, origin, loss, delivered, assigned, a.Nonce) { VerdictsFrom = verdictsFrom, Rejections = rejections });
        t.Accepted++;
    }

    /// <summary>
    /// Measures loss over the numbers the sender claimed sent at an earlier ACKREQ, once that claim is at least
    /// <see cref="ReplicaSieveOptions.LossGraceMs"/> old: a message sent just before an ACKREQ is usually still on its
    /// way, and counted lost it moved senders off healthy pre-SQs at start-up, for good. Between measurements the
    /// last rate is repeated and is not fresh (it must not move the sender again). For a grace period after a move
    /// nothing is claimed, and the first claim after it starts the measured range: what the sender sent before it
    /// knew of the move went through the pre-SQ it left, and counted against the new one, a dropping pre-SQ's losses
    /// sent the sender straight back to it, every two seconds (docs/attacks.md, dropping-presq).
    /// </summary>
    private (int LossPpm, bool Fresh) MeasureLoss(SenderRecord s, int sender, long lastSent)
    {
        if (s.LastMove.Quiet(_now, _options.LossGraceMs))
        {
            return (s.LastLossPpm, false);
        }
        var claim = s.PendingLossClaim;
        if (claim.IsNone)
        {
            if (!s.LastMove.IsNone)
            {
                s.LossBaseline = Math.Max(s.LossBaseline, lastSent);
            }
            s.PendingLossClaim = new LossClaim(Math.Max(lastSent, 0), _now);
            return (s.LastLossPpm, false);
        }
        if (_now - claim.AtMs < _options.LossGraceMs)
        {
            return (s.LastLossPpm, false);
        }
        s.PendingLossClaim = new LossClaim(Math.Max(lastSent, 0), _now);
        if (LossPpm(s, sender, claim.LastSent) is not { } ppm)
        {
            // The claim opened the range after a move: nothing to measure yet.
            return (s.LastLossPpm, false);
        }
        s.LastLossPpm = ppm;
        return (ppm, true);
    }

    /// <summary>Share of (baseline, lastSent] neither taken into agreed state nor held, in ppm; at most one window is examined; null if empty.</summary>
    private int? LossPpm(SenderRecord s, int sender, long lastSent)
    {
        var low = Math.Max(s.LossBaseline, lastSent - _options.WindowSize);
        if (lastSent <= low)
        {
            return null;
        }
        long missing = 0;
        for (var seq = low + 1; seq <= lastSent; seq++)
        {
            if (!s.Window.Contains(seq) && !_reorder.Contains(sender, seq))
            {
                missing++;
            }
        }
        s.LossBaseline = lastSent;
        return (int)(missing * 1_000_000 / (lastSent - low));
    }

    /// <summary>
    /// Redistributes load (paper 4.4.2): a sender whose pre-SQ loses too much, warned of overload or is
    /// quarantined moves to the healthy pre-SQ with the fewest senders (lowest id on ties); for loss, to a warned one
    /// if no other is healthy; for load, not back onto the one it left for loss within <see cref="ReplicaSieveOptions.LossMoveHoldMs"/>. Loss moves the sender
    /// only: it is the sender's claim (numbers it says it sent), and late is not lost, so it is no evidence against
    /// the pre-SQ. Counted as suspicion, one lying sender could get every pre-SQ quarantined in turn, and an
    /// overloaded honest pre-SQ was (its queued messages counted as lost until it was quarantined).
    /// </summary>
    private int Reassign(SenderRecord s, int origin, bool lossy)
    {
        if (s.AssignedPreSq < 0 || !_keys.IsPreSq(s.AssignedPreSq))
        {
            // A new sender goes where the fewest are, not where its first ACKREQ came through: which of a sender's
            // ACKREQs is answered first at start-up is a race (a retry goes through the next pre-SQ), and placement
            // by origin put every sender on one pre-SQ in some runs and none on it in others (docs/attacks.md).
            var first = PickHealthyElseWarned(exclude: -1);
            s.AssignedPreSq = first >= 0 ? first : origin;
        }
        var current = s.AssignedPreSq;
        if (!lossy && Healthy(current))
        {
            return current;
        }
        int pick;
        if (lossy)
        {
            // Loss outweighs a load warning: a sender losing its messages is better served by a busy pre-SQ, and
            // warnings alone once kept two senders on a pre-SQ that dropped everything (docs/attacks.md).
            pick = PickHealthyElseWarned(exclude: current);
        }
        else
        {
            // Warned or quarantined: not back onto a pre-SQ the sender recently left for loss, unless its own is
            // quarantined and nothing else healthy is left; a quarantined one is left for a warned one too.
            pick = Pick(exclude: current, avoid: s.LastMove.AvoidedAt(_now, _options.LossMoveHoldMs));
            if (pick < 0 && !Serving(current))
            {
                pick = PickHealthyElseWarned(exclude: current);
            }
        }
        if (pick < 0)
        {
            return current;
        }
        s.LastMove = new PreSqMove(current, _now, lossy);
        s.PendingLossClaim = default;
        s.AssignedPreSq = pick;
        return pick;
    }

    private int PickHealthyElseWarned(int exclude) => Pick(exclude) is >= 0 and var healthy ? healthy : Pick(exclude, warnedToo: true);

    private bool Healthy(int preSq) => Serving(preSq) && !(_preSqs.TryGetValue(preSq, out var p) && p.WarnedUntilMs > _now);

    /// <summary>Enrolled and quarantined neither by the administrator nor by suspicion; it may be warned of load.</summary>
    private bool Serving(int preSq) =>
        _keys.IsPreSq(preSq)
        && !_admin.QuarantinedPreSqs.Contains(preSq)
        && !(_preSqs.TryGetValue(preSq, out var p) && p.Suspicion.IsQuarantined(_now, _options.PreSqSuspicion));

    /// <summary>
    /// The healthy (or, with <paramref name="warnedToo"/>, serving) pre-SQ other than <paramref name="exclude"/> and
    /// <paramref name="avoid"/> with the fewest senders, lowest id on ties; -1 if none.
    /// </summary>
    private int Pick(int exclude, bool warnedToo = false, int avoid = -1)
    {
        var load = new SortedDictionary<int, int>();
        foreach (var id in _keys.PreSqIds)
        {
            load[id] = 0;
        }
        foreach (var s in _senders.Values)
        {
            if (load.ContainsKey(s.AssignedPreSq))
            {
                load[s.AssignedPreSq]++;
            }
        }
        var best = -1;
        var bestLoad = int.MaxValue;
        foreach (var (id, n) in load)
        {
            if (id != exclude && id != avoid && (warnedToo ? Serving(id) : Healthy(id)) && n < bestLoad)
            {
                best = id;
                bestLoad = n;
            }
        }
        return best;
    }

    /// <summary>WARNREQ: the pre-SQ is near capacity; if every pre-SQ is, ask the controller for another.</summary>
    private void HandleLoadWarning(int origin, ReadOnlyMemory<byte> bytes, ref Tally t)
    {
        LoadWarning w;
        try
        {
            w = LoadWarningCodec.Decode(bytes.Span);
        }
        catch (MalformedEnvelopeException)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t);
            SuspectPreSq(origin, _options.MalformedPreSqWeight);
            return;
        }
        if (w.PreSq != origin)
        {
            Drop(SieveStage.Parse, DropReason.WrongOrigin, ref t);
            SuspectPreSq(origin, _options.MalformedPreSqWeight);
            return;
        }
        var p = PreSqOf(origin);
        p.WarnedUntilMs = _now + _options.WarningHoldMs;
        p.LastLoadPermille = w.LoadPermille;
        t.Accepted++;
        if (_keys.PreSqIds.All(id => !Healthy(id)) && _now - _lastCapacityNoticeMs >= _options.WarningHoldMs)
        {
            _lastCapacityNoticeMs = _now;
            _outbox.Add(new ControllerNotice(ControllerAction.AddPreSq, origin, _now));
        }
    }

    /// <summary>A receiver's acknowledgement trims its queue; as room returns, throttled grants recover.</summary>
    private void HandleReceiverAck(ReadOnlyMemory<byte> bytes, ref Tally t)
    {
        ReceiverAck a;
        try
        {
            a = ReceiverAckCodec.Decode(bytes);
        }
        catch (MalformedEnvelopeException)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t);
            return;
        }
        if (_auth.Verify(a, bytes) != SignatureVerdict.Valid)
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.BadSignature, ref t);
            return;
        }
        var q = QueueOf(a.Receiver);
        foreach (var c in a.Cursors)
        {
            q.Acknowledge(c.Sender, c.DeliveredUpTo);
        }
        if (q.Occupancy < _options.ReceiverQueueCapacity / 2 && q.OccupancyBytes < _options.ReceiverQueueBytes / 2)
        {
            foreach (var c in a.Cursors)
            {
                if (_senders.TryGetValue(c.Sender, out var s))
                {
                    s.Grant.Relax();
                }
            }
        }
        t.Accepted++;
    }
}
