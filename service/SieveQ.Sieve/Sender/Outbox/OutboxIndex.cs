namespace SieveQ.Sieve.Sender.Outbox;

/// <summary>Where a pending message's record lies in the outbox file.</summary>
public readonly record struct OutboxEntry(long Seq, int Receiver, long Offset, int Length);

/// <summary>
/// The in-memory view of an outbox file: the messages not yet acknowledged (in number order, where their
/// records lie) and how much of the file is dead weight, which decides compaction. Pure; not thread-safe.
/// </summary>
public sealed class OutboxIndex
{
    /// <summary>Below this file size compaction is never worth a rewrite.</summary>
    public const long MinCompactionBytes = 4L << 20;

    private readonly SortedDictionary<long, OutboxEntry> _pending = [];

    /// <summary>Everything up to this number was acknowledged by f+1 replica-SQs.</summary>
    public long AcknowledgedUpTo { get; private set; }

    /// <summary>The highest number ever added (0 when none).</summary>
    public long LastSeq { get; private set; }

    /// <summary>Bytes of the file, header and dead records included.</summary>
    public long FileBytes { get; private set; } = OutboxRecordCodec.HeaderBytes;

    /// <summary>Bytes of the pending messages' records: what a compaction keeps, and what the bound counts.</summary>
    public long PendingBytes { get; private set; }

    public int PendingCount => _pending.Count;

    public IEnumerable<OutboxEntry> Pending => _pending.Values;

    /// <summary>An index of what a scan found; the file holds <see cref="OutboxScan.ValidLength"/> bytes after its torn tail is cut.</summary>
    /// <exception cref="OutboxCorruptException">Message numbers that do not increase: the file was not written by an outbox.</exception>
    public static OutboxIndex FromScan(OutboxScan scan)
    {
        ArgumentNullException.ThrowIfNull(scan);
        var index = new OutboxIndex();
        foreach (var r in scan.Records)
        {
            if (r.Kind == OutboxRecordKind.Acknowledged)
            {
                index.AcknowledgeUpTo(r.Seq, r.Length);
                continue;
            }
            if (r.Seq <= index.LastSeq)
            {
                throw new OutboxCorruptException($"outbox record at byte {r.Offset}: message {r.Seq} after message {index.LastSeq}");
            }
            index.Add(new OutboxEntry(r.Seq, r.Receiver, r.Offset, r.Length));
        }
        index.FileBytes = Math.Max(OutboxRecordCodec.HeaderBytes, scan.ValidLength);
        return index;
    }

    /// <summary>Records a message appended at the end of the file.</summary>
    public void Add(OutboxEntry entry)
    {
        if (entry.Seq <= LastSeq)
        {
            throw new ArgumentException($"message {entry.Seq} is not above {LastSeq}", nameof(entry));
        }
        LastSeq = entry.Seq;
        FileBytes = Math.Max(FileBytes, entry.Offset + entry.Length);
        if (entry.Seq <= AcknowledgedUpTo)
        {
            return;
        }
        _pending.Add(entry.Seq, entry);
        PendingBytes += entry.Length;
    }

    /// <summary>Drops the messages up to <paramref name="upTo"/>; <paramref name="recordBytes"/> is the size of the acknowledgement record appended for it (0 if none).</summary>
    public void AcknowledgeUpTo(long upTo, int recordBytes)
    {
        FileBytes += recordBytes;
        if (upTo <= AcknowledgedUpTo)
        {
            return;
        }
        AcknowledgedUpTo = upTo;
        while (_pending.Count > 0)
        {
            var first = _pending.First();
            if (first.Key > upTo)
            {
                break;
            }
            _pending.Remove(first.Key);
            PendingBytes -= first.Value.Length;
        }
    }

    /// <summary>
    /// Whether one more message of <paramref name="dataLength"/> bytes stays within the bound. An empty outbox takes
    /// any message, so a bound below one record's size still lets messages through one at a time.
    /// </summary>
    public bool HasRoomFor(int dataLength, long maxBytes, int maxEntries) =>
        _pending.Count == 0 || (_pending.Count < maxEntries && PendingBytes + OutboxRecordCodec.MessageRecordBytes(dataLength) <= maxBytes);

    /// <summary>A rewrite keeping only the pending records would at least halve a file that is no longer small.</summary>
    public bool WorthCompacting => FileBytes >= MinCompactionBytes && FileBytes > 2 * (PendingBytes + OutboxRecordCodec.HeaderBytes);

    /// <summary>After a compaction wrote the pending records back to back after the header, in number order.</summary>
    public void Compacted(int acknowledgementRecordBytes)
    {
        var at = (long)OutboxRecordCodec.HeaderBytes + acknowledgementRecordBytes;
        foreach (var seq in _pending.Keys.ToList())
        {
            var e = _pending[seq];
            _pending[seq] = e with { Offset = at };
            at += e.Length;
        }
        FileBytes = at;
    }
}
