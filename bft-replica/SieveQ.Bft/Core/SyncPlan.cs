using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// What a new leader's SYNC carries, from 2f+1 STOPDATA: the evidence, the instance to start at and, when a
/// certificate binds it, the values the certificates hold for it and for the instance before it.
/// </summary>
internal sealed record SyncPlan(IReadOnlyList<StopData> Evidence, SyncDecision Choice, Batch? BoundValue, Batch? BoundPriorValue)
{
    /// <summary>A bound hash whose value no certificate in the evidence carries: no SYNC can be built from it.</summary>
    public bool BoundValueMissing => Choice.BoundHash is not null && (BoundValue is null || (Choice.PriorHash is not null && BoundPriorValue is null));

    /// <summary>Followers re-check the choice from hashes alone, so the certificates travel without their values.</summary>
    public StopData[] EvidenceWithoutValues() => Evidence.Select(s => s with
    {
        Certificates = s.Certificates.Select(c => c with { Value = null }).ToArray(),
    }).ToArray();
}
