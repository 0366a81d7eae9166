using System.Diagnostics;
using System.Globalization;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Storage;

/// <summary>
/// The replica's durable records in one live segment file. Appends are buffered and made durable by
/// <see cref="Sync"/> (one fsync for many records: group commit). <see cref="Truncate"/> starts a new segment
/// holding only what recovery still needs (latest regency, latest checkpoint, records above the truncation
/// point), written to a temporary file, fsynced and renamed over, so a crash at any point leaves either the
/// old or the new segment complete. Recovery reads the newest segment up to the first torn or corrupt record
/// and cuts the file there.
/// </summary>
public sealed class WriteAheadLog : IDisposable
{
    private const string Prefix = "wal-", Suffix = ".log";
    private readonly string _directory;
    private readonly RecordBuffer _buffer = new();
    private FileStream _file;
    private long _generation;
    private RegencyRecord? _regency;
    private CheckpointRecord? _checkpoint;
    /// <summary>
    /// The checkpoint before the newest, carried across compaction too: a replica that restarts must still vouch for
    /// it (and serve it), or a peer a whole interval behind finds no f+1 replicas agreeing on any checkpoint.
    /// </summary>
    private CheckpointRecord? _previousCheckpoint;
    private List<DurableRecord> _tail = [];
    /// <summary>(instance, batch hash) of the prepared records with a batch in the live segment: a decision on one is logged as a reference.</summary>
    private HashSet<(long, Digest)> _segmentBatches = [];
    private bool _dirty;

    private WriteAheadLog(string directory, long generation, FileStream file)
    {
        _directory = directory;
        _generation = generation;
        _file = file;
    }

    public long Generation => _generation;
    public long BytesWritten { get; private set; }
    private long _syncs;

    /// <summary>fsyncs so far; read by status snapshots on another thread.</summary>
    public long Syncs => Interlocked.Read(ref _syncs);

    /// <summary>Opens (or creates) the log in <paramref name="directory"/> and returns the records to replay, oldest first.</summary>
    public static WriteAheadLog Open(string directory, out List<DurableRecord> recovered)
    {
        Directory.CreateDirectory(directory);
        foreach (var tmp in Directory.GetFiles(directory, "*.tmp"))
        {
            File.Delete(tmp);
        }
        var segments = Directory.GetFiles(directory, Prefix + "*" + Suffix)
            .Select(p => (Path: p, Gen: ParseGeneration(p)))
            .Where(s => s.Gen >= 0)
            .OrderBy(s => s.Gen)
            .ToList();
        recovered = [];
        long generation = 0;
        if (segments.Count > 0)
        {
            var newest = segments[^1];
            generation = newest.Gen;
            foreach (var old in segments.Take(segments.Count - 1))
            {
                File.Delete(old.Path);  // superseded by a completed roll
            }
            var bytes = File.ReadAllBytes(newest.Path);
            recovered = ReadSegment(bytes, out var pos);
            if (pos < bytes.Length)
            {
                using var cut = new FileStream(newest.Path, FileMode.Open, FileAccess.Write);
                cut.SetLength(pos);
                cut.Flush(flushToDisk: true);
            }
        }
        var file = new FileStream(SegmentPath(directory, generation), FileMode.Append, FileAccess.Write, FileShare.Read, 64 * 1024);
        var wal = new WriteAheadLog(directory, generation, file);
        foreach (var r in recovered)
        {
            wal.Track(r);
            NoteBatch(r, wal._segmentBatches);
        }
        return wal;
    }

    /// <summary>
    /// The records of one segment's bytes, oldest first, up to the first torn or corrupt record
    /// (<paramref name="validLength"/> bytes); decision references resolved against the prepared records
    /// before them. Never throws on damaged input: it is what a crash, a full disk or a bad sector left.
    /// </summary>
    public static List<DurableRecord> ReadSegment(ReadOnlySpan<byte> bytes, out int validLength)
    {
        var records = new List<DurableRecord>();
        var batches = new Dictionary<(long, Digest), Batch>();
        var pos = 0;
        while (WalRecordCodec.TryDecode(bytes[pos..], out var record, out var consumed))
        {
            pos += consumed;
            switch (record)
            {
                case PreparedRecord { Certificate: { Value: { } batch } c }:
                    batches[(c.ConsensusId, c.BatchHash)] = batch;
                    break;
                case DecisionReference d:
                    // Written only after its prepared record, in the same segment; a missing one means a
                    // damaged log, and a decision may be lost safely (it is decided again from certificates).
                    record = batches.TryGetValue((d.ConsensusId, d.BatchHash), out var b) ? new DecisionRecord(d.ConsensusId, b) : null;
                    break;
            }
            if (record is not null)
            {
                records.Add(record);
            }
        }
        validLength = pos;
        return records;
    }

    /// <exception cref="WalRecordTooLargeException">
    /// The record is larger than recovery reads (<see cref="WalRecordCodec.MaxRecordBytes"/>). Written, it would be
    /// read back as a torn tail and the log cut there, losing it and every record after it; it is refused instead,
    /// and nothing is written.
    /// </exception>
    public void Append(DurableRecord record)
    {
        var start = Stopwatch.GetTimestamp();
        _buffer.Reset();
        WalRecordCodec.Encode(AsLogged(record, _segmentBatches), _buffer);
        if (_buffer.WrittenCount - WalRecordCodec.HeaderBytes > WalRecordCodec.MaxRecordBytes)
        {
            throw new WalRecordTooLargeException(record.GetType().Name, _buffer.WrittenCount - WalRecordCodec.HeaderBytes);
        }
        _file.Write(_buffer.Written);
        BytesWritten += _buffer.WrittenCount;
        _dirty = true;
        Track(record);
        StageTimings.Add(Stage.Wal, start);
    }

    /// <summary>Makes every appended record durable (fsync); a no-op when nothing was appended since the last call.</summary>
    public void Sync()
    {
        if (!_dirty)
        {
            return;
        }
        var start = Stopwatch.GetTimestamp();
        _file.Flush(flushToDisk: true);
        _dirty = false;
        Interlocked.Increment(ref _syncs);
        StageTimings.Add(Stage.Wal, start, 0);
    }

    /// <summary>
    /// Hands every appended record to the operating system without waiting for the disk: a crash of this
    /// process alone (kill -9, an unhandled exception) then loses none of them; only a power loss can, and
    /// what it loses is what <see cref="Sync"/> has not yet covered.
    /// </summary>
    public void WriteThrough()
    {
        if (_dirty)
        {
            _file.Flush(flushToDisk: false);
        }
    }

    /// <summary>Drops records at or below <paramref name="upToConsensusId"/> by rolling to a compacted segment.</summary>
    public void Truncate(long upToConsensusId)
    {
        var start = Stopwatch.GetTimestamp();
        Sync();
        _tail = _tail.Where(r => r switch
        {
            DecisionRecord d => d.ConsensusId > upToConsensusId,
            PreparedRecord p => p.Certificate.ConsensusId > upToConsensusId,
            _ => true,
        }).ToList();
        var next = _generation + 1;
        var tmp = SegmentPath(_directory, next) + ".tmp";
        var segmentBatches = new HashSet<(long, Digest)>();
        using (var fs = new FileStream(tmp, FileMode.Create, FileAccess.Write, FileShare.None, 64 * 1024))
        {
            var carried = new List<DurableRecord>();
            if (_regency is not null)
            {
                carried.Add(_regency);
            }
            if (_previousCheckpoint is not null)
            {
                carried.Add(_previousCheckpoint);
            }
            if (_checkpoint is not null)
            {
                carried.Add(_checkpoint);
            }
            carried.AddRange(_tail);
            foreach (var r in carried)
            {
                _buffer.Reset();
                WalRecordCodec.Encode(AsLogged(r, segmentBatches), _buffer);
                fs.Write(_buffer.Written);
            }
            fs.Flush(flushToDisk: true);
        }
        File.Move(tmp, SegmentPath(_directory, next));
        _file.Dispose();
        File.Delete(SegmentPath(_directory, _generation));
        _generation = next;
        _segmentBatches = segmentBatches;
        _file = new FileStream(SegmentPath(_directory, next), FileMode.Append, FileAccess.Write, FileShare.Read, 64 * 1024);
        StageTimings.Add(Stage.Wal, start, 0);
    }

    /// <summary>
    /// The form a record takes in a segment whose prepared batches are <paramref name="segmentBatches"/>
    /// (updated): a decision on one of them becomes a reference.
    /// </summary>
    private static DurableRecord AsLogged(DurableRecord record, HashSet<(long, Digest)> segmentBatches)
    {
        if (record is DecisionRecord d && segmentBatches.Contains((d.ConsensusId, d.Value.Hash)))
        {
            return new DecisionReference(d.ConsensusId, d.Value.Hash);
        }
        NoteBatch(record, segmentBatches);
        return record;
    }

    /// <summary>Adds a prepared record's batch to the segment's: later decisions on it are written as references.</summary>
    private static void NoteBatch(DurableRecord record, HashSet<(long, Digest)> segmentBatches)
    {
        if (record is PreparedRecord { Certificate: { Value: not null } c })
        {
            segmentBatches.Add((c.ConsensusId, c.BatchHash));
        }
    }

    private void Track(DurableRecord record)
    {
        switch (record)
        {
            case RegencyRecord r when _regency is null || r.Regency >= _regency.Regency:
                _regency = r;
                break;
            case CheckpointRecord c when _checkpoint is null || c.ConsensusId >= _checkpoint.ConsensusId:
                if (_checkpoint is not null && c.ConsensusId > _checkpoint.ConsensusId)
                {
                    _previousCheckpoint = _checkpoint;
                }
                _checkpoint = c;
                break;
            case CheckpointRecord c when _previousCheckpoint is null || c.ConsensusId >= _previousCheckpoint.ConsensusId:
                _previousCheckpoint = c;
                break;
            case DecisionRecord or PreparedRecord:
                _tail.Add(record);
                break;
        }
    }

    private static string SegmentPath(string dir, long generation) =>
        Path.Combine(dir, Prefix + generation.ToString("D12", CultureInfo.InvariantCulture) + Suffix);

    private static long ParseGeneration(string path)
    {
        var name = Path.GetFileName(path);
        return long.TryParse(name.AsSpan(Prefix.Length, name.Length - Prefix.Length - Suffix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var g) ? g : -1;
    }

    public void Dispose()
    {
        Sync();
        _file.Dispose();
    }
}

/// <summary>A record recovery could not read back; it was not written.</summary>
public sealed class WalRecordTooLargeException(string kind, long bytes)
    : IOException($"write-ahead log: a {kind} of {bytes} bytes is above the {WalRecordCodec.MaxRecordBytes} bytes recovery reads; it was not written");
