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

    /// <summary>Pre-SQ that last forwarded a badly signed message in this sender's name (-1: none).</summary>
    public int LastBadSignatureOrigin { get; set; } = -1;

    /// <summary>An administrator's readmission: the evidence so far is forgotten.</summary>
    public void ClearSuspicion() => Suspicion = new SuspicionCounter();

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
        return s;
    }
}
