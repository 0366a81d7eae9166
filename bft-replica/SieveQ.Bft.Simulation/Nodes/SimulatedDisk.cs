using SieveQ.Bft.Core;

namespace SieveQ.Bft.Simulation.Nodes;

/// <summary>
/// A replica's stable storage: survives crashes. Like the real host's group commit, a record that gates
/// later sends is durable at once and makes every record appended before it durable too; a record that
/// gates nothing (a decision) stays volatile until then, or until the replica's next timer tick (the
/// host's lazy sync), and a crash loses it. Truncation follows the core's instruction; the newest regency
/// record is all that recovery needs of the older ones, so they are folded to keep the disk bounded.
/// </summary>
internal sealed class SimulatedDisk
{
    private readonly List<DurableRecord> _records = [];
    private readonly List<DurableRecord> _volatile = [];

    public int Count => _records.Count;
    public int MaxCount { get; private set; }
    /// <summary>Decision and prepared-certificate records, volatile ones included: what checkpoints must keep bounded.</summary>
    public int LogRecords => _records.Concat(_volatile).Count(r => r is DecisionRecord or PreparedRecord);

    public void Append(DurableRecord record)
    {
        if (!record.GatesLaterSends)
        {
            _volatile.Add(record);
            return;
        }
        Sync();
        _records.Add(record);
        MaxCount = Math.Max(MaxCount, _records.Count);
    }

    /// <summary>Makes volatile records durable, as the host's sync does.</summary>
    public void Sync()
    {
        _records.AddRange(_volatile);
        _volatile.Clear();
        MaxCount = Math.Max(MaxCount, _records.Count);
    }

    /// <summary>The crash: volatile records are gone. Returns how many.</summary>
    public int LoseVolatile()
    {
        var lost = _volatile.Count;
        _volatile.Clear();
        return lost;
    }

    public void Truncate(long upToConsensusId)
    {
        Sync();
        // The newest checkpoint and the one before it, as the write-ahead log keeps them.
        var keptCheckpoints = _records.OfType<CheckpointRecord>().OrderByDescending(c => c.ConsensusId).Take(2).ToList();
        var highestRegency = _records.OfType<RegencyRecord>().MaxBy(r => r.Regency);
        _records.RemoveAll(r => r switch
        {
            DecisionRecord d => d.ConsensusId <= upToConsensusId,
            PreparedRecord p => p.Certificate.ConsensusId <= upToConsensusId,
            CheckpointRecord c => !keptCheckpoints.Any(k => ReferenceEquals(k, c)),
            RegencyRecord g => !ReferenceEquals(g, highestRegency),
            _ => false,
        });
    }

    public IReadOnlyList<DurableRecord> ReadAll() => _records.ToArray();
}
