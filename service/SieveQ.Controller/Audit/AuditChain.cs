using System.Security.Cryptography;

namespace SieveQ.Controller.Audit;

/// <summary>Where a chain check stopped: the record (by its position) that is not what the chain says it must be.</summary>
public sealed record AuditChainBreak(int LineIndex, long ExpectedSequence, string Reason);

/// <summary>
/// The chain rule, without I/O: each record decodes intact, its sequence is the one after the previous record's,
/// and its previous hash is the previous record's hash. A file continues the chain of the one before it, so
/// rotation loses nothing.
/// </summary>
public sealed class AuditChain
{
    public AuditChain(long lastSequence, byte[] lastHash)
    {
        ArgumentNullException.ThrowIfNull(lastHash);
        LastSequence = lastSequence;
        LastHash = lastHash;
    }

    /// <summary>An empty log: the next record is sequence 1 after the genesis hash.</summary>
    public static AuditChain Empty() => new(0, AuditRecordCodec.GenesisHash);

    public long LastSequence { get; private set; }
    public byte[] LastHash { get; private set; }

    /// <summary>Checks one more line against the chain; on success the chain moves on to it.</summary>
    public AuditRecord? TryAppend(ReadOnlySpan<byte> line, out string error)
    {
        var record = AuditRecordCodec.TryDecode(line, out error);
        if (record is null)
        {
            return null;
        }
        if (record.Sequence != LastSequence + 1)
        {
            error = $"sequence {record.Sequence} where {LastSequence + 1} must follow (a record was removed, added or moved)";
            return null;
        }
        if (!CryptographicOperations.FixedTimeEquals(record.PreviousHash, LastHash))
        {
            error = $"its previous hash is not the hash of record {LastSequence} (a record before it was replaced)";
            return null;
        }
        LastSequence = record.Sequence;
        LastHash = record.Hash;
        return record;
    }

    /// <summary>Checks whole lines; null when all hold, else the first that does not.</summary>
    public AuditChainBreak? Verify(IEnumerable<byte[]> lines)
    {
        ArgumentNullException.ThrowIfNull(lines);
        var i = 0;
        foreach (var line in lines)
        {
            var expected = LastSequence + 1;
            if (TryAppend(line, out var error) is null)
            {
                return new AuditChainBreak(i, expected, error);
            }
            i++;
        }
        return null;
    }
}
