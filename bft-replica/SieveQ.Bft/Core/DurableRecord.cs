using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>What a replica writes ahead so that a restart never makes regency or instance ids go back.</summary>
public abstract record DurableRecord;

public sealed record RegencyRecord(int Regency) : DurableRecord;

public sealed record PreparedRecord(PreparedCertificate Certificate) : DurableRecord;

public sealed record DecisionRecord(long ConsensusId, Batch Value) : DurableRecord;

/// <summary>A checkpoint: the full replicated state (application plus client table) after instance <see cref="ConsensusId"/>.</summary>
public sealed record CheckpointRecord(long ConsensusId, Digest StateHash, byte[] State) : DurableRecord;
