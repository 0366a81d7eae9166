using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

/// <summary>Agreed per-sender state at the replicas.</summary>
internal sealed class SenderRecord
{
    public SenderRecord(SequenceWindow window, GrantBucket grant)
    {
        Window = window;
        Grant = grant;
    }

    /// <summary>Sequence numbers taken into agreed state (check (e), replay protection).</summary>
    public SequenceWindow Window { get; }

    public GrantBucket Grant { get; private set; }

    public SuspicionCounter Suspicion { get; private set; } = new();

    /// <summary>Highest sequence number given to the rules; the reorder buffer waits for RuleCursor + 1.</summary>
    public long RuleCursor { get; set; }

    /// <summary>Pre-SQ the sender is told to use (-1: not assigned yet).</summary>
    public int AssignedPreSq { get; set; } = -1;

    /// <summary>Nonce of the last ACKREQ answered; older or equal ones are replays.</summary>
    public long LastAckNonce { get; set; }

    /// <summary>Agreed time of the last ACKREQ answered.</summary>
    public long LastAckTimeMs { get; set; } = long.MinValue / 2;

    /// <summary>Sequence numbers up to here were accounted for in an earlier loss rate.</summary>
    public long LossBaseline { get; set; }

    /// <summary>
    /// The last-sent number of an ACKREQ not yet measured against, and when it came: loss is measured only over
    /// numbers claimed sent at least a grace period ago, so messages still in flight are not counted lost.
    /// </summary>
    public LossClaim PendingLossClaim { get; set; }

    /// <summary>The loss rate (ppm) of the last measurement, repeated in every ACKRES until the next one.</summary>
    public int LastLossPpm { get; set; }

    /// <summary>The last move between pre-SQs (kept in its own snapshot section).</summary>
    public PreSqMove LastMove { get; set; } = PreSqMove.None;

    /// <summary>Pre-SQ that last forwarded a badly signed message in this sender's name (-1: none).</summary>
    public int LastBadSignatureOrigin { get; set; } = -1;

    /// <summary>An administrator's readmission: the evidence so far is forgotten.</summary>
    public void ClearSuspicion() => Suspicion = new SuspicionCounter();

    /// <summary>
    /// Messages taken and rejected that the sender has not yet been told of (it still waits for them: numbers at or
    /// above its last ACKREQ's lowestPending), ascending, at most <see cref="EnvelopeLimits.MaxAckRejections"/>.
    /// </summary>
    public List<MessageRejection> Rejections { get; } = [];

    /// <summary>Highest number whose rejection had to be forgotten to keep <see cref="Rejections"/> bounded (0: none).</summary>
    public long VerdictsLostUpTo { get; set; }

    /// <summary>Remembers a rejection for the sender's next ACKRES; the oldest is forgotten when the list is full.</summary>
    public void Reject(long seq, RejectionReason reason, string rule)
    {
        if (Rejections.Count >= EnvelopeLimits.MaxAckRejections)
        {
            VerdictsLostUpTo = Math.Max(VerdictsLostUpTo, Rejections[0].Seq);
            Rejections.RemoveAt(0);
        }
        Rejections.Add(new MessageRejection(seq, reason, AckResponseCodec.Cut(rule)));
    }

    /// <summary>The sender no longer waits for numbers below <paramref name="lowestPending"/>: their verdicts are not kept.</summary>
    public void ForgetVerdictsBelow(long lowestPending) => Rejections.RemoveAll(j => j.Seq < lowestPending);

    public void WriteTo(CanonicalWriter w)
    {
        Window.WriteTo(w);
        Grant.WriteTo(w);
        Suspicion.WriteTo(w);
        w.Seq(RuleCursor);
        w.I64(AssignedPreSq);
        w.Seq(LastAckNonce);
        w.I64(LastAckTimeMs);
        w.Seq(LossBaseline);
        w.I64(LastBadSignatureOrigin);
        w.Seq(VerdictsLostUpTo);
        w.Id(Rejections.Count);
        foreach (var j in Rejections)
        {
            w.Seq(j.Seq);
            w.U8((byte)j.Reason);
            w.Bytes(System.Text.Encoding.UTF8.GetBytes(j.Rule));
        }
    }

    public static SenderRecord ReadFrom(ref CanonicalReader r, ReplicaSieveOptions options)
    {
        var window = new SequenceWindow(options.WindowSize, options.MaxAhead, adoptFirst: false);
        window.ReadFrom(ref r);
        var grant = GrantBucket.ReadFrom(ref r);
        var s = new SenderRecord(window, grant) { Suspicion = SuspicionCounter.ReadFrom(ref r) };
        s.RuleCursor = r.Seq("rule cursor");
        var assigned = r.I64("assigned pre-SQ");
        if (assigned is < -1 or > int.MaxValue)
        {
            throw new MalformedEnvelopeException("assigned pre-SQ out of range");
        }
        s.AssignedPreSq = (int)assigned;
        s.LastAckNonce = r.Seq("ack nonce");
        s.LastAckTimeMs = r.I64("ack time");
        s.LossBaseline = r.Seq("loss baseline");
        var badOrigin = r.I64("bad-signature origin");
        if (badOrigin is < -1 or > int.MaxValue)
        {
            throw new MalformedEnvelopeException("bad-signature origin out of range");
        }
        s.LastBadSignatureOrigin = (int)badOrigin;
        s.VerdictsLostUpTo = r.Seq("verdicts lost up to");
        var count = r.Count(EnvelopeLimits.MaxAckRejections, "rejections");
        var previous = 0L;
        for (var i = 0; i < count; i++)
        {
            var seq = r.Seq("rejected seq");
            var reason = r.U8("rejection reason");
            if (seq <= previous || reason is not ((byte)RejectionReason.ReceiverNotEnrolled or (byte)RejectionReason.RuleDenied))
            {
                throw new MalformedEnvelopeException("rejections out of order or of an unknown reason");
            }
            previous = seq;
            string rule;
            try
            {
                rule = new System.Text.UTF8Encoding(false, throwOnInvalidBytes: true).GetString(r.Bytes(EnvelopeLimits.MaxRejectionRuleBytes, "rejection rule"));
            }
            catch (System.Text.DecoderFallbackException e)
            {
                throw new MalformedEnvelopeException("rejection rule is not UTF-8", e);
            }
            s.Rejections.Add(new MessageRejection(seq, (RejectionReason)reason, rule));
        }
        return s;
    }
}
