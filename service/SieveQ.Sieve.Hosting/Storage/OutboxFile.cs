using SieveQ.Sieve.Sender.Outbox;

namespace SieveQ.Sieve.Hosting.Storage;

/// <summary>A message found pending in an outbox when it was opened: to be sent again with its own number.</summary>
public sealed record RecoveredMessage(long Seq, int Receiver, byte[] Data);

/// <summary>
/// A sender's durable outbox (format: <see cref="OutboxRecordCodec"/>). Messages are appended and made
/// durable together by <see cref="Commit"/> (one fsync for every message appended since the last one:
/// group commit); acknowledgements are appended without an fsync, since losing one only resends messages
/// the replicas drop as replays. When most of the file is acknowledged, it is compacted: the pending
/// records go to a temporary file, which is fsynced and renamed over the outbox, and the directory is
/// fsynced so the rename survives a crash. Opened exclusively: one process per sender and state folder.
/// Not thread-safe.
/// </summary>
public sealed class OutboxFile : IDisposable
{
    private readonly string _path;
    private FileStream _file;
    private bool _dirty;

    private OutboxFile(string path, FileStream file, OutboxIndex index, IReadOnlyList<RecoveredMessage> recovered, bool tornTailCut)
    {
        _path = path;
        _file = file;
        Index = index;
        Recovered = recovered;
        TornTailCut = tornTailCut;
    }

    public OutboxIndex Index { get; }

    /// <summary>The messages pending when the file was opened, in number order.</summary>
    public IReadOnlyList<RecoveredMessage> Recovered { get; }

    /// <summary>Whether opening cut a torn last record (a crash interrupted an append).</summary>
    public bool TornTailCut { get; }

    /// <summary>Compactions done since opening.</summary>
    public long Compactions { get; private set; }

    /// <summary>Opens or creates the outbox at <paramref name="path"/>; a torn tail is cut (and the cut made durable).</summary>
    /// <exception cref="OutboxCorruptException">The file is damaged beyond a torn tail; it is left as it is.</exception>
    public static OutboxFile Open(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        path = Path.GetFullPath(path);
        var created = !File.Exists(path);
        var file = new FileStream(path, Options(FileMode.OpenOrCreate));
        try
        {
            var bytes = new byte[file.Length];
            file.ReadExactly(bytes);
            OutboxScan scan;
            try
            {
                scan = OutboxRecordCodec.Scan(bytes);
            }
            catch (OutboxCorruptException e)
            {
                throw new OutboxCorruptException($"outbox {path}: {e.Message}; move it away to start without it (its pending messages are then lost)", e);
            }
            var index = OutboxIndex.FromScan(scan);
            if (scan.ValidLength < OutboxRecordCodec.HeaderBytes)
            {
                file.SetLength(0);
                file.Write(OutboxRecordCodec.Header);
                file.Flush(flushToDisk: true);
            }
            else if (scan.ValidLength < bytes.Length)
            {
                file.SetLength(scan.ValidLength);
                file.Flush(flushToDisk: true);
            }
            if (created)
            {
                DirectorySync.Flush(Path.GetDirectoryName(path)!);
            }
            file.Position = file.Length;
            var pending = index.Pending.Select(e => e.Seq).ToHashSet();
            var recovered = scan.Records
                .Where(r => r.Kind == OutboxRecordKind.Message && pending.Contains(r.Seq))
                .Select(r => new RecoveredMessage(r.Seq, r.Receiver, r.Data.ToArray()))
                .ToList();
            return new OutboxFile(path, file, index, recovered, scan.TornTail);
        }
        catch
        {
            file.Dispose();
            throw;
        }
    }

    /// <summary>Appends a message; durable only after the next <see cref="Commit"/>.</summary>
    public void Append(long seq, int receiver, ReadOnlySpan<byte> data)
    {
        var record = OutboxRecordCodec.EncodeMessage(seq, receiver, data);
        var offset = _file.Position;
        _file.Write(record);
        Index.Add(new OutboxEntry(seq, receiver, offset, record.Length));
        _dirty = true;
    }

    /// <summary>Makes every append so far durable: one fsync, however many messages.</summary>
    public void Commit()
    {
        if (!_dirty)
        {
            return;
        }
        _file.Flush(flushToDisk: true);
        _dirty = false;
    }

    /// <summary>Forgets the messages up to <paramref name="upTo"/>; compacts when most of the file is then dead.</summary>
    public void AcknowledgeUpTo(long upTo)
    {
        if (upTo <= Index.AcknowledgedUpTo)
        {
            return;
        }
        var record = OutboxRecordCodec.EncodeAcknowledged(upTo);
        _file.Write(record);
        Index.AcknowledgeUpTo(upTo, record.Length);
        if (Index.WorthCompacting)
        {
            Compact();
        }
    }

    /// <summary>Rewrites the file with only the pending records (see the class comment for the durability steps).</summary>
    public void Compact()
    {
        Commit();
        _file.Flush(flushToDisk: false);
        var temp = _path + ".compact";
        var acknowledged = OutboxRecordCodec.EncodeAcknowledged(Index.AcknowledgedUpTo);
        using (var target = new FileStream(temp, Options(FileMode.Create)))
        {
            target.Write(OutboxRecordCodec.Header);
            target.Write(acknowledged);
            var buffer = new byte[64 * 1024];
            foreach (var e in Index.Pending)
            {
                if (buffer.Length < e.Length)
                {
                    buffer = new byte[e.Length];
                }
                RandomAccess.Read(_file.SafeFileHandle, buffer.AsSpan(0, e.Length), e.Offset);
                target.Write(buffer, 0, e.Length);
            }
            target.Flush(flushToDisk: true);
        }
        // Windows will not rename over an open file; reopening right after keeps the exclusive use short of a gap
        // only another process of the same sender could use, which one sender per state folder rules out.
        _file.Dispose();
        File.Move(temp, _path, overwrite: true);
        DirectorySync.Flush(Path.GetDirectoryName(_path)!);
        _file = new FileStream(_path, Options(FileMode.Open));
        _file.Position = _file.Length;
        Index.Compacted(acknowledged.Length);
        Compactions++;
    }

    public void Dispose()
    {
        _file.Flush(flushToDisk: true);
        _file.Dispose();
    }

    private static FileStreamOptions Options(FileMode mode)
    {
        var options = new FileStreamOptions { Mode = mode, Access = FileAccess.ReadWrite, Share = FileShare.None };
        if (!OperatingSystem.IsWindows() && mode != FileMode.Open)
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        return options;
    }
}
