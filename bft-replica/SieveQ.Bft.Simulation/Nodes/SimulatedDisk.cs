using SieveQ.Bft.Core;

namespace SieveQ.Bft.Simulation.Nodes;

/// <summary>
/// A replica's stable storage: survives crashes, written synchronously as the core's outputs are
/// processed. Truncation follows the core's instruction; the newest regency record is all that
/// recovery needs of the older ones, so they are folded to keep the disk bounded.
/// </summary>
internal sealed class SimulatedDisk
{
    private readonly List<DurableRecord> _records = [];

    public int Count => _records.Count;
    public int MaxCount { get; private set; }
    /// <summary>Decision and prepared-certificate records: what checkpoints must keep bounded.</summary>
    public int LogRecords => _records.Count(r => r is DecisionRecord or PreparedRecord);

    public void Append(DurableRecord record)
    {
        _records.Add(record);
        MaxCount = Math.Max(MaxCount, _records.Count);
    }

    public void Truncate(long upToConsensusId)
    {
        var newestCheckpoint = _records.OfType<CheckpointRecord>().MaxBy(c => c.ConsensusId);
        var highestRegency = _records.OfType<RegencyRecord>().MaxBy(r => r.Regency);
        _records.RemoveAll(r => r switch
        {
            DecisionRecord d => d.ConsensusId <= upToConsensusId,
            PreparedRecord p => p.Certificate.ConsensusId <= upToConsensusId,
            CheckpointRecord c => !ReferenceEquals(c, newestCheckpoint),
            RegencyRecord g => !ReferenceEquals(g, highestRegency),
            _ => false,
        });
    }

    public IReadOnlyList<DurableRecord> ReadAll() => _records.ToArray();
}
