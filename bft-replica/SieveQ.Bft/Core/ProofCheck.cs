using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// Verifies every signature a message carries, including those nested in certificates and SYNC
/// evidence. Hosts run it on worker threads before a message reaches the core; the core then
/// checks only the logic (quorums, distinct signers, matching values), never the cryptography.
/// </summary>
public static class ProofCheck
{
    public static bool VerifySignatures(BftMessage message, IProofVerifier verifier, int replicaCount) => message switch
    {
        Write w => verifier.Verify(w.From, SigningBytes.ForWrite(w.Regency, w.ConsensusId, w.BatchHash), w.Signature),
        StopData sd => VerifyStopData(sd, verifier, replicaCount),
        Sync s => s.Evidence.All(sd => VerifyStopData(sd, verifier, replicaCount)),
        _ => true,
    };

    public static bool VerifyStopData(StopData sd, IProofVerifier verifier, int replicaCount)
    {
        if (sd.From < 0 || sd.From >= replicaCount)
        {
            return false;
        }
        if (!verifier.Verify(sd.From, SigningBytes.ForStopData(sd.From, sd.NewRegency, sd.LastDecided, sd.Certificates), sd.Signature))
        {
            return false;
        }
        foreach (var c in sd.Certificates)
        {
            var bytes = SigningBytes.ForWrite(c.Regency, c.ConsensusId, c.BatchHash);
            foreach (var s in c.Writes)
            {
                if (s.Replica < 0 || s.Replica >= replicaCount || !verifier.Verify(s.Replica, bytes, s.Signature))
                {
                    return false;
                }
            }
        }
        return true;
    }
}
