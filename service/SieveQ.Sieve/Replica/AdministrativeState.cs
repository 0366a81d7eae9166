using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// Agreed state that only administrator commands change: who is quarantined by an administrator (until readmitted,
/// independent of the suspicion counters) and the highest command nonce applied (replay protection). Bounded by the
/// enrolment: only enrolled senders and pre-SQs can be named.
/// </summary>
internal sealed class AdministrativeState
{
    public long LastNonce { get; set; }

    public SortedSet<int> QuarantinedSenders { get; private init; } = [];

    public SortedSet<int> QuarantinedPreSqs { get; private init; } = [];

    /// <summary>Layout: <c>u64 lastNonce | u32 n | n x u32 sender | u32 m | m x u32 pre-SQ</c>, ids ascending.</summary>
    public void WriteTo(CanonicalWriter w)
    {
        w.Seq(LastNonce);
        WriteSet(w, QuarantinedSenders);
        WriteSet(w, QuarantinedPreSqs);
    }

    public static AdministrativeState ReadFrom(ref CanonicalReader r) => new()
    {
        LastNonce = r.Seq("administrator nonce"),
        QuarantinedSenders = ReadSet(ref r, "administrator-quarantined senders"),
        QuarantinedPreSqs = ReadSet(ref r, "administrator-quarantined pre-SQs"),
    };

    private static void WriteSet(CanonicalWriter w, SortedSet<int> ids)
    {
        w.Id(ids.Count);
        foreach (var id in ids)
        {
            w.Id(id);
        }
    }

    private static SortedSet<int> ReadSet(ref CanonicalReader r, string what)
    {
        var n = r.Count(EnvelopeLimits.MaxItems * 16, what);
        var set = new SortedSet<int>();
        var previous = -1;
        for (var i = 0; i < n; i++)
        {
            var id = r.Id(what);
            if (id <= previous)
            {
                throw new MalformedEnvelopeException($"{what} not in ascending order");
            }
            previous = id;
            set.Add(id);
        }
        return set;
    }
}
