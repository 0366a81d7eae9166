using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

/// <summary>Agreed per-pre-SQ state at the replicas.</summary>
internal sealed class PreSqRecord
{
    public SuspicionCounter Suspicion { get; private set; } = new();

    /// <summary>Agreed time until which its last WARNREQ marks it as overloaded.</summary>
    public long WarnedUntilMs { get; set; } = long.MinValue / 2;

    public int LastLoadPermille { get; set; }

    /// <summary>An administrator's readmission: the evidence so far is forgotten.</summary>
    public void ClearSuspicion() => Suspicion = new SuspicionCounter();

    public void WriteTo(CanonicalWriter w)
    {
        Suspicion.WriteTo(w);
        w.I64(WarnedUntilMs);
        w.Id(LastLoadPermille);
    }

    public static PreSqRecord ReadFrom(ref CanonicalReader r) => new()
    {
        Suspicion = SuspicionCounter.ReadFrom(ref r),
        WarnedUntilMs = r.I64("warned until"),
        LastLoadPermille = r.Id("load"),
    };
}
