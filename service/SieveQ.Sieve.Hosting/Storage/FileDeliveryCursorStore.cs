using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Receiver;

namespace SieveQ.Sieve.Hosting.Storage;

/// <summary>
/// Cursors in one file, replaced atomically: written to a temporary file, flushed to disk, then
/// renamed over the old one. Layout: <c>"SQCUR1" | u32 count | count x (u32 sender | u64 upTo) | 32 SHA-256</c>.
/// A torn or tampered file fails its check and is refused with <see cref="MalformedEnvelopeException"/>
/// rather than silently restarting from zero (which would deliver everything again).
/// </summary>
public sealed class FileDeliveryCursorStore : IDeliveryCursorStore
{
    private static readonly byte[] Magic = "SQCUR1"u8.ToArray();
    private readonly string _path;

    public FileDeliveryCursorStore(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        _path = path;
    }

    public IReadOnlyList<DeliveredCursor> Load()
    {
        if (!File.Exists(_path))
        {
            return [];
        }
        var bytes = File.ReadAllBytes(_path);
        if (bytes.Length < Magic.Length + 4 + 32)
        {
            throw new MalformedEnvelopeException($"cursor file {_path} is truncated");
        }
        var body = bytes.AsSpan(0, bytes.Length - 32);
        if (!SHA256.HashData(body).AsSpan().SequenceEqual(bytes.AsSpan(bytes.Length - 32)))
        {
            throw new MalformedEnvelopeException($"cursor file {_path} fails its checksum");
        }
        var r = new CanonicalReader(body);
        if (!r.Take(Magic.Length, "magic").SequenceEqual(Magic))
        {
            throw new MalformedEnvelopeException($"{_path} is not a cursor file");
        }
        var n = r.Count(EnvelopeLimits.MaxAckEntries, "cursor count");
        var list = new DeliveredCursor[n];
        for (var i = 0; i < n; i++)
        {
            var sender = r.Id("sender");
            list[i] = new DeliveredCursor(sender, r.Seq("upTo"));
        }
        r.End("cursor file");
        return list;
    }

    public void Save(IReadOnlyList<DeliveredCursor> cursors)
    {
        ArgumentNullException.ThrowIfNull(cursors);
        using var w = new CanonicalWriter(16 + 12 * cursors.Count);
        w.Raw(Magic);
        w.Id(cursors.Count);
        foreach (var c in cursors)
        {
            w.Id(c.Sender);
            w.Seq(c.DeliveredUpTo);
        }
        var hash = SHA256.HashData(w.WrittenSpan);
        w.Raw(hash);
        var temp = _path + ".tmp";
        var options = new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write, Share = FileShare.None };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        using (var fs = new FileStream(temp, options))
        {
            fs.Write(w.WrittenSpan);
            fs.Flush(flushToDisk: true);
        }
        File.Move(temp, _path, overwrite: true);
    }
}
