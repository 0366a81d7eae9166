using System.Security.Cryptography;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// Whether a file changed since it was last taken, also when a rewrite keeps its length and lands in the same
/// timestamp granule as the write taken (a few milliseconds on Linux file systems, one or two seconds on FAT, SMB and
/// some network file systems): the length and write time first; and when the file was taken within
/// <see cref="Granule"/> of its write time, so that a later write could still carry the same time, its content's
/// SHA-256 as well, until a look finds the same content after the granule has passed. So the hashing is paid only for
/// files taken in the seconds after they were written.
/// </summary>
internal sealed class FileChangeStamp
{
    /// <summary>The coarsest timestamp granule expected under a console's files (FAT's two seconds), with a margin.</summary>
    public static readonly TimeSpan Granule = TimeSpan.FromSeconds(3);

    private readonly string _path;
    private readonly long _maxHashedBytes;
    private (bool Exists, long Length, DateTime WrittenUtc) _stat;
    private byte[]? _hash;
    private bool _sameTimeRewritePossible;

    /// <param name="maxHashedBytes">A file longer than this is told apart by its length and write time only (its readers refuse it anyway).</param>
    public FileChangeStamp(string path, long maxHashedBytes)
    {
        _path = path;
        _maxHashedBytes = maxHashedBytes;
        Take();
    }

    /// <summary>Records the file as it is now: after reading it, or after writing it.</summary>
    public void Take()
    {
        _stat = Stat();
        // A file over the hashing bound has no hash to compare: it is told apart by length and write time only.
        _sameTimeRewritePossible = _stat.Exists && _stat.Length <= _maxHashedBytes && DateTime.UtcNow - _stat.WrittenUtc <= Granule;
        _hash = _sameTimeRewritePossible ? Hash(_stat) : null;
    }

    /// <summary>True when the file is not as it was at the last <see cref="Take"/>.</summary>
    public bool Changed()
    {
        var now = Stat();
        if (now != _stat)
        {
            return true;
        }
        if (!_sameTimeRewritePossible)
        {
            return false;
        }
        var hash = Hash(now);
        if (hash is null || _hash is null || !hash.AsSpan().SequenceEqual(_hash))
        {
            return true;
        }
        // The same content after the granule: any later write gets a later time.
        _sameTimeRewritePossible = DateTime.UtcNow - now.WrittenUtc <= Granule;
        return false;
    }

    private (bool Exists, long Length, DateTime WrittenUtc) Stat()
    {
        var f = new FileInfo(_path);
        return f.Exists ? (true, f.Length, f.LastWriteTimeUtc) : (false, 0L, default);
    }

    private byte[]? Hash((bool Exists, long Length, DateTime WrittenUtc) stat)
    {
        if (!stat.Exists || stat.Length > _maxHashedBytes)
        {
            return null;
        }
        try
        {
            return SHA256.HashData(File.ReadAllBytes(_path));
        }
        catch (IOException)
        {
            return null; // replaced or removed while read: the next look sees it
        }
        catch (UnauthorizedAccessException)
        {
            return null;
        }
    }
}
