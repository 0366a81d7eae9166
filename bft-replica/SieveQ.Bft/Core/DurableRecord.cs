using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>What a replica writes ahead so that a restart never makes regency or instance ids go back.</summary>
public abstract record DurableRecord
{
    /// <summary>
    /// True when the messages the core emits after this record may leave only once it is durable (the host
    /// holds them until its next sync). False for records that only shorten recovery: the host may sync those
    /// later, and a crash may lose them.
    /// </summary>
    public virtual bool GatesLaterSends => true;
}

public sealed record RegencyRecord(int Regency) : DurableRecord;

public sealed record PreparedRecord(PreparedCertificate Certificate) : DurableRecord;

/// <summary>
/// A decided instance. It does not gate sends: a decision rests on 2f+1 ACCEPTs, and each replica sends its
/// ACCEPT only after its <see cref="PreparedRecord"/> for the value is durable. So even if every replica
/// loses its unsynced decision records, at least f+1 correct ones recover a certificate for the value and the
/// next regency decides it again; the re-executed outputs are the same bytes, which receivers deduplicate.
/// Syncing it lazily takes one fsync per instance off the ordering path.
/// </summary>
public sealed record DecisionRecord(long ConsensusId, Batch Value) : DurableRecord
{
    public override bool GatesLaterSends => false;
}

/// <summary>A checkpoint: the full replicated state (application plus client table) after instance <see cref="ConsensusId"/>.</summary>
public sealed record CheckpointRecord(long ConsensusId, Digest StateHash, byte[] State) : DurableRecord;
