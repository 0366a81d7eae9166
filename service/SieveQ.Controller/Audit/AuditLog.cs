using System.Globalization;
using Microsoft.Win32.SafeHandles;

namespace SieveQ.Controller.Audit;

/// <summary>The audit log on disk does not hold together; <see cref="Message"/> names the file, line and record.</summary>
public sealed class AuditLogBrokenException : Exception
{
    public AuditLogBrokenException() { }

    public AuditLogBrokenException(string message) : base(message) { }

    public AuditLogBrokenException(string message, Exception inner) : base(message, inner) { }

    public string? File { get; init; }
    public long RecordSequence { get; init; }
}

public sealed record AuditLogOptions
{
    /// <summary>A file is closed and the next started before a record would take it past this size.</summary>
    public long MaxFileBytes { get; init; } = 16 * 1024 * 1024;

    /// <summary>How many of the newest records are kept in memory for <see cref="AuditLog.Tail"/>.</summary>
    public int TailRecords { get; init; } = 1000;

    public TimeProvider Time { get; init; } = TimeProvider.System;
}

/// <summary>
/// The controller's append-only, hash-chained audit log: files <c>audit-000001.log</c>, <c>audit-000002.log</c>, ... in one
/// directory, one <see cref="AuditRecordCodec"/> line per record, each file continuing the chain of the one before
/// (rotation at <see cref="AuditLogOptions.MaxFileBytes"/>). Opening verifies the whole chain and refuses a broken one,
/// naming the record; the only repair it makes is cutting a torn last line (an append the crash interrupted, which no
/// caller was told had succeeded). Every append is on disk (fsync) before it returns. Old files are never deleted
/// here: archiving them is the operator's decision, and the chain tells if one goes missing.
/// </summary>
public sealed class AuditLog : IAsyncDisposable, IDisposable
{
    private const string Prefix = "audit-";
    private const string Suffix = ".log";

    private readonly SemaphoreSlim _appendLock = new(1, 1);
    private readonly AuditLogOptions _options;
    private readonly Queue<AuditRecord> _tail;
    private readonly AuditChain _chain;
    private SafeFileHandle _file;
    private int _fileIndex;
    private long _fileBytes;
    private bool _faulted;

    private AuditLog(string directory, AuditLogOptions options, AuditChain chain, Queue<AuditRecord> tail, SafeFileHandle file, int fileIndex, long fileBytes)
    {
        Directory = directory;
        _options = options;
        _chain = chain;
        _tail = tail;
        _file = file;
        _fileIndex = fileIndex;
        _fileBytes = fileBytes;
    }

    public string Directory { get; }
    public long LastSequence => _chain.LastSequence;
    public byte[] LastHash => (byte[])_chain.LastHash.Clone();
    /// <summary>Bytes cut from a torn last line when the log was opened (0 normally).</summary>
    public long TornBytesCut { get; private init; }
    public string CurrentFile => FilePath(Directory, _fileIndex);

    public static string FilePath(string directory, int index) =>
        Path.Combine(directory, Prefix + index.ToString("D6", CultureInfo.InvariantCulture) + Suffix);

    /// <summary>Opens (or creates) the log in <paramref name="directory"/> and verifies it; throws <see cref="AuditLogBrokenException"/> on a broken chain.</summary>
    public static AuditLog Open(string directory, AuditLogOptions? options = null)
    {
        options ??= new AuditLogOptions();
        if (options.MaxFileBytes < AuditRecordCodec.MaxLineBytes + 1 || options.TailRecords < 1)
        {
            throw new ArgumentException($"audit files must hold at least one record ({AuditRecordCodec.MaxLineBytes + 1} bytes) and the tail one record");
        }
        System.IO.Directory.CreateDirectory(directory);
        var indexes = ListFiles(directory);
        for (var i = 0; i < indexes.Count; i++)
        {
            if (indexes[i] != i + 1)
            {
                throw new AuditLogBrokenException($"{FilePath(directory, i + 1)}: missing (the files go on from {FilePath(directory, indexes[i])}); records were removed")
                {
                    File = FilePath(directory, i + 1),
                };
            }
        }
        var chain = AuditChain.Empty();
        var tail = new Queue<AuditRecord>();
        long torn = 0;
        long lastFileBytes = 0;
        for (var i = 0; i < indexes.Count; i++)
        {
            var path = FilePath(directory, indexes[i]);
            var isLast = i == indexes.Count - 1;
            var (valid, cut) = VerifyFile(path, chain, tail, options.TailRecords, isLast);
            torn += cut;
            lastFileBytes = valid;
        }
        var index = Math.Max(1, indexes.Count);
        var handle = File.OpenHandle(FilePath(directory, index), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read);
        try
        {
            if (RandomAccess.GetLength(handle) != lastFileBytes)
            {
                // Cut the torn tail found by VerifyFile (or a file created by someone else since: refuse it).
                if (RandomAccess.GetLength(handle) < lastFileBytes)
                {
                    throw new AuditLogBrokenException($"{FilePath(directory, index)}: shrank while it was being opened") { File = FilePath(directory, index) };
                }
                RandomAccess.SetLength(handle, lastFileBytes);
                RandomAccess.FlushToDisk(handle);
            }
        }
        catch
        {
            handle.Dispose();
            throw;
        }
        return new AuditLog(directory, options, chain, tail, handle, index, lastFileBytes) { TornBytesCut = torn };
    }

    /// <summary>The newest records, oldest first (at most <paramref name="count"/> and the in-memory tail).</summary>
    public IReadOnlyList<AuditRecord> Tail(int count)
    {
        lock (_tail)
        {
            return _tail.Skip(Math.Max(0, _tail.Count - Math.Max(0, count))).ToList();
        }
    }

    /// <summary>Appends one record and returns once it is on disk. Fields over their limits are refused (<see cref="ArgumentException"/>).</summary>
    public async Task<AuditRecord> AppendAsync(string actor, string action, string target, string outcome, CancellationToken ct = default)
    {
        await _appendLock.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            // After a failed write the file may end in part of a record; reopening cuts it, appending after it would not.
            ObjectDisposedException.ThrowIf(_faulted, this);
            var record = AuditRecordCodec.Create(_chain.LastSequence + 1, _options.Time.GetUtcNow().ToUnixTimeMilliseconds(), actor, action, target, outcome, _chain.LastHash);
            var encoded = AuditRecordCodec.Encode(record);
            var line = new byte[encoded.Length + 1];
            encoded.CopyTo(line, 0);
            line[^1] = (byte)'\n';
            try
            {
                if (_fileBytes > 0 && _fileBytes + line.Length > _options.MaxFileBytes)
                {
                    Rotate();
                }
                // Not cancellable past this point: a record half written because a caller gave up would be a torn tail.
                await RandomAccess.WriteAsync(_file, line, _fileBytes, CancellationToken.None).ConfigureAwait(false);
                RandomAccess.FlushToDisk(_file);
            }
            catch
            {
                _faulted = true;
                throw;
            }
            _fileBytes += line.Length;
            if (_chain.TryAppend(encoded, out var error) is null)
            {
                _faulted = true;
                throw new InvalidOperationException($"audit record {record.Sequence} did not chain: {error}");
            }
            lock (_tail)
            {
                _tail.Enqueue(record);
                while (_tail.Count > _options.TailRecords)
                {
                    _tail.Dequeue();
                }
            }
            return record;
        }
        finally
        {
            _appendLock.Release();
        }
    }

    private void Rotate()
    {
        var next = File.OpenHandle(FilePath(Directory, _fileIndex + 1), FileMode.CreateNew, FileAccess.ReadWrite, FileShare.Read);
        _file.Dispose();
        _file = next;
        _fileIndex++;
        _fileBytes = 0;
    }

    private static List<int> ListFiles(string directory)
    {
        var indexes = new List<int>();
        foreach (var path in System.IO.Directory.EnumerateFiles(directory, Prefix + "*" + Suffix))
        {
            var name = Path.GetFileName(path);
            var digits = name[Prefix.Length..^Suffix.Length];
            if (digits.Length != 6 || !int.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out var index) || index < 1)
            {
                throw new AuditLogBrokenException($"{path}: not an audit file name (audit-NNNNNN.log)") { File = path };
            }
            indexes.Add(index);
        }
        indexes.Sort();
        return indexes;
    }

    /// <summary>Checks one file against the chain; returns the length of its intact part and how many torn bytes follow it.</summary>
    private static (long Valid, long Torn) VerifyFile(string path, AuditChain chain, Queue<AuditRecord> tail, int tailRecords, bool isLast)
    {
        var length = new FileInfo(path).Length;
        // Bounded: a file never grows past MaxFileBytes, but the bound here is what this process will read into memory.
        if (length > 1L << 30)
        {
            throw new AuditLogBrokenException($"{path}: {length} bytes, larger than any audit file this controller writes") { File = path };
        }
        var bytes = File.ReadAllBytes(path);
        var start = 0;
        var lineNumber = 1;
        while (start < bytes.Length)
        {
            var end = Array.IndexOf(bytes, (byte)'\n', start);
            if (end < 0)
            {
                var fragment = bytes.AsSpan(start);
                if (!isLast)
                {
                    throw Broken(path, lineNumber, chain.LastSequence + 1, "the file ends inside a record, and it is not the last file");
                }
                // The append that a crash interrupted: never acknowledged, so it is cut. It can only be a prefix of a record;
                // if it is a whole one (only the newline missing) it is kept and completed instead.
                var probe = new AuditChain(chain.LastSequence, chain.LastHash);
                if (probe.TryAppend(fragment, out _) is { } whole)
                {
                    using var complete = File.OpenHandle(path, FileMode.Open, FileAccess.Write);
                    RandomAccess.Write(complete, "\n"u8, bytes.Length);
                    RandomAccess.FlushToDisk(complete);
                    chain.TryAppend(fragment, out _);
                    Remember(tail, whole, tailRecords);
                    return (bytes.Length + 1, 0);
                }
                return (start, bytes.Length - start);
            }
            var expected = chain.LastSequence + 1;
            if (chain.TryAppend(bytes.AsSpan(start, end - start), out var error) is not { } record)
            {
                throw Broken(path, lineNumber, expected, error);
            }
            Remember(tail, record, tailRecords);
            start = end + 1;
            lineNumber++;
        }
        return (bytes.Length, 0);
    }

    private static void Remember(Queue<AuditRecord> tail, AuditRecord record, int max)
    {
        tail.Enqueue(record);
        if (tail.Count > max)
        {
            tail.Dequeue();
        }
    }

    private static AuditLogBrokenException Broken(string path, int line, long sequence, string reason) =>
        new($"{path} line {line}: audit record {sequence} is broken: {reason}") { File = path, RecordSequence = sequence };

    public void Dispose()
    {
        _file.Dispose();
        _appendLock.Dispose();
    }

    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }
}
