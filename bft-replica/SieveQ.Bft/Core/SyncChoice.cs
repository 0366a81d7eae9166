using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// The instance a new regency starts at and, when a certificate binds it, the value it must re-propose;
/// <see cref="PriorHash"/> is the value the evidence binds for the instance before it (see <see cref="SyncChoice"/>).
/// </summary>
internal readonly record struct SyncDecision(long ConsensusId, Digest? BoundHash, Digest? PriorHash);

/// <summary>
/// The rule a new leader applies to 2f+1 STOPDATA, and every replica re-applies to check SYNC.
/// Correct replicas prepare instance c only after deciding c-1 and keep the certificates of the
/// two highest instances they prepared, so the highest certified instance X in any 2f+1 STOPDATA
/// is at least the highest decided instance, and X-1 is decided. For X the value with the
/// highest-regency certificate is the only one that can have been decided (PBFT's view-change rule).
/// <para>
/// X-1 is decided, but decision records are synced lazily, so after every replica lost power its decision
/// may survive on fewer than f+1 disks and state transfer cannot vouch for it. The same rule binds it:
/// 2f+1 replicas durably prepared its decided value, one correct one of them is in any quorum of STOPDATA,
/// and its two highest certificates (none above X) include X-1. So the highest-regency certificate for
/// X-1 in the evidence holds the decided value. The step-by-step argument is in docs/bft-protocol.md.
/// </para>
/// </summary>
internal static class SyncChoice
{
    public static SyncDecision Choose(IReadOnlyList<StopData> evidence, ReplicaConfig config)
    {
        PreparedCertificate? best = null;
        foreach (var sd in evidence.OrderBy(s => s.From))
        {
            foreach (var c in sd.Certificates)
            {
                if (best is null || c.ConsensusId > best.ConsensusId || (c.ConsensusId == best.ConsensusId && c.Regency > best.Regency))
                {
                    best = c;
                }
            }
        }
        if (best is not null)
        {
            return new SyncDecision(best.ConsensusId, best.BatchHash, HighestCertificate(evidence, best.ConsensusId - 1)?.BatchHash);
        }
        // With no certificate in a quorum nothing has been decided (given durable certificates);
        // the (f+1)-th highest claim is one at least one correct replica vouches for.
        var claims = evidence.Select(s => s.LastDecided).OrderByDescending(x => x).ToArray();
        var vouched = claims.Length > config.F ? claims[config.F] : 0;
        return new SyncDecision(vouched + 1, null, null);
    }

    /// <summary>The highest-regency certificate for one instance across the evidence (the lowest sender wins ties), or null.</summary>
    public static PreparedCertificate? HighestCertificate(IReadOnlyList<StopData> evidence, long cid)
    {
        PreparedCertificate? best = null;
        foreach (var sd in evidence.OrderBy(s => s.From))
        {
            foreach (var c in sd.Certificates)
            {
                if (c.ConsensusId == cid && (best is null || c.Regency > best.Regency))
                {
                    best = c;
                }
            }
        }
        return best;
    }

    /// <summary>
    /// Re-derives a new leader's choice from the evidence its SYNC carries; any mismatch is a bad justification,
    /// named. A fresh value (nothing bound) passes here: judging it as a proposal is the caller's part.
    /// </summary>
    public static string? Judge(Sync s, ReplicaConfig config, out SyncDecision choice)
    {
        choice = default;
        if (s.Value is null)
        {
            return "no-value";
        }
        var senders = new HashSet<int>();
        foreach (var sd in s.Evidence)
        {
            if (sd.From < 0 || sd.From >= config.N || !senders.Add(sd.From))
            {
                return "evidence-sender";
            }
            if (Validate(sd, s.Regency, config, requireValues: false) is not null)
            {
                return "evidence-invalid";
            }
        }
        if (senders.Count < config.Quorum)
        {
            return "evidence-below-quorum";
        }
        choice = Choose(s.Evidence, config);
        if (choice.ConsensusId != s.ConsensusId)
        {
            return "wrong-instance";
        }
        if (choice.PriorHash is { } priorHash ? s.PriorValue?.Hash != priorHash : s.PriorValue is not null)
        {
            return "wrong-prior";
        }
        if (choice.BoundHash is { } bound && s.Value.Hash != bound)
        {
            return "wrong-value";
        }
        return null;
    }

    /// <summary>Structural check of one STOPDATA; signatures were verified before the core saw it.</summary>
    public static string? Validate(StopData sd, int regency, ReplicaConfig config, bool requireValues)
    {
        if (sd.NewRegency != regency)
        {
            return "wrong regency";
        }
        if (sd.Certificates.Count > Codec.WireLimits.MaxCertificates)
        {
            return "too many certificates";
        }
        var seenCids = new HashSet<long>();
        foreach (var c in sd.Certificates)
        {
            if (!seenCids.Add(c.ConsensusId))
            {
                return "two certificates for one instance";
            }
            if (c.ConsensusId < 1 || c.ConsensusId > sd.LastDecided + 1)
            {
                return "certificate for an instance the sender could not have prepared";
            }
            if (c.Regency >= regency)
            {
                return "certificate from a regency not yet reached";
            }
            var signers = new HashSet<int>();
            foreach (var w in c.Writes)
            {
                if (w.Replica < 0 || w.Replica >= config.N || !signers.Add(w.Replica))
                {
                    return "certificate signer out of range or repeated";
                }
            }
            if (signers.Count < config.Quorum)
            {
                return "certificate below quorum";
            }
            if (requireValues && (c.Value is null || c.Value.Hash != c.BatchHash))
            {
                return "certificate value missing or not matching its hash";
            }
            if (!requireValues && c.Value is not null)
            {
                return "certificate carries a value where none belongs";
            }
        }
        return null;
    }
}
