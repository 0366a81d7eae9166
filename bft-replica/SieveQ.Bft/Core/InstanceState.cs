using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// One consensus instance under the current regency. Each peer contributes at most one proposal,
/// one WRITE and one ACCEPT, so an instance's memory is bounded by n.
/// </summary>
internal sealed class InstanceState(long consensusId, long createdAt)
{
    public long ConsensusId { get; } = consensusId;
    public long ActiveSince { get; set; } = createdAt;
    public long LastRetransmitAt { get; set; } = createdAt;

    public Batch? Proposal { get; set; }
    /// <summary>Set when the value came from SYNC and was already judged there (chosen from a certificate or checked fresh).</summary>
    public bool ProposalPrechecked { get; set; }

    public Dictionary<int, (Digest Hash, byte[] Signature)> Writes { get; } = [];
    public Dictionary<int, Digest> Accepts { get; } = [];

    public bool SentWrite { get; set; }
    public bool Prepared { get; set; }
    public bool SentAccept { get; set; }
    public byte[]? OwnWriteSignature { get; set; }

    public int WritesFor(Digest hash) => Writes.Values.Count(w => w.Hash == hash);

    public Digest? AcceptedBy(int quorum)
    {
        foreach (var h in Accepts.Values.Distinct())
        {
            if (Accepts.Values.Count(a => a == h) >= quorum)
            {
                return h;
            }
        }
        return null;
    }
}
