using System.Diagnostics;
using System.Globalization;
using SieveQ.Bft.Core;

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
    private List<DurableRecord> _tail = [];
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
            var pos = 0;
            while (WalRecordCodec.TryDecode(bytes.AsSpan(pos), out var record, out var consumed))
            {
                recovered.Add(record!);
                pos += consumed;
            }
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
        }
        return wal;
    }

    public void Append(DurableRecord record)
    {
        var start = Stopwatch.GetTimestamp();
        _buffer.Reset();
        WalRecordCodec.Encode(record, _buffer);
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
        using (var fs = new FileStream(tmp, FileMode.Create, FileAccess.Write, FileShare.None, 64 * 1024))
        {
            var carried = new List<DurableRecord>();
            if (_regency is not null)
            {
                carried.Add(_regency);
            }
            if (_checkpoint is not null)
            {
                carried.Add(_checkpoint);
            }
            carried.AddRange(_tail);
            foreach (var r in carried)
            {
                _buffer.Reset();
                WalRecordCodec.Encode(r, _buffer);
                fs.Write(_buffer.Written);
            }
            fs.Flush(flushToDisk: true);
        }
        File.Move(tmp, SegmentPath(_directory, next));
        _file.Dispose();
        File.Delete(SegmentPath(_directory, _generation));
        _generation = next;
        _file = new FileStream(SegmentPath(_directory, next), FileMode.Append, FileAccess.Write, FileShare.Read, 64 * 1024);
        StageTimings.Add(Stage.Wal, start, 0);
    }

    private void Track(DurableRecord record)
    {
        switch (record)
        {
            case RegencyRecord r when _regency is null || r.Regency >= _regency.Regency:
                _regency = r;
                break;
            case CheckpointRecord c when _checkpoint is null || c.ConsensusId >= _checkpoint.ConsensusId:
                _checkpoint = c;
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
