using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sieve.Hosting.Storage;

/// <summary>
/// The high-water mark in a small file of two 16-byte slots, each <c>u64 mark | u64 check</c>, written
/// alternately and flushed to disk before returning. A crash mid-write can tear at most the slot being
/// written; the other still holds the previous mark, and loading takes the highest slot whose check
/// matches. (Overwriting one value in place could lose it; rename-based replacement needs a directory
/// fsync that .NET does not offer portably.)
/// </summary>
public sealed class FileSequenceStore : ISequenceStore, IDisposable
{
    private const int SlotBytes = 16;
    private readonly FileStream _file;
    private int _nextSlot;

    public FileSequenceStore(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        var options = new FileStreamOptions { Mode = FileMode.OpenOrCreate, Access = FileAccess.ReadWrite, Share = FileShare.None };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        _file = new FileStream(path, options);
    }

    public long LoadReserved()
    {
        Span<byte> buf = stackalloc byte[2 * SlotBytes];
        buf.Clear();
        _file.Position = 0;
        var read = 0;
        while (read < buf.Length)
        {
            var n = _file.Read(buf[read..]);
            if (n == 0)
            {
                break;
            }
            read += n;
        }
        long best = 0;
        var bestSlot = -1;
        for (var slot = 0; slot < 2; slot++)
        {
            var s = buf.Slice(slot * SlotBytes, SlotBytes);
            var mark = BinaryPrimitives.ReadInt64LittleEndian(s);
            if (mark > 0 && BinaryPrimitives.ReadUInt64LittleEndian(s[8..]) == Check(mark) && mark > best)
            {
                best = mark;
                bestSlot = slot;
            }
        }
        // Next write goes to the other slot, so the best one survives a torn write.
        _nextSlot = bestSlot == 0 ? 1 : 0;
        return best;
    }

    /// <summary>
    /// Loading takes the highest valid slot, so both slots get the lower mark: first the one written next (the higher
    /// slot still wins if a crash tears it), then the other (if that write tears, its check fails and the lower mark is
    /// the highest valid one).
    /// </summary>
    public void LowerReserved(long lastUsed)
    {
        SaveReserved(lastUsed);
        SaveReserved(lastUsed);
    }

    public void SaveReserved(long reservedUpTo)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(reservedUpTo, 1);
        Span<byte> slot = stackalloc byte[SlotBytes];
        BinaryPrimitives.WriteInt64LittleEndian(slot, reservedUpTo);
        BinaryPrimitives.WriteUInt64LittleEndian(slot[8..], Check(reservedUpTo));
        _file.Position = _nextSlot * SlotBytes;
        _file.Write(slot);
        _file.Flush(flushToDisk: true);
        _nextSlot ^= 1;
    }

    public void Dispose() => _file.Dispose();

    private static ulong Check(long mark)
    {
        Span<byte> b = stackalloc byte[16];
        "SQSEQv1\0"u8.CopyTo(b);
        BinaryPrimitives.WriteInt64LittleEndian(b[8..], mark);
        Span<byte> h = stackalloc byte[32];
        SHA256.HashData(b, h);
        return BinaryPrimitives.ReadUInt64LittleEndian(h);
    }
}
