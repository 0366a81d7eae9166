using System.Buffers.Binary;
using System.Diagnostics;

namespace SieveQ.Attacks;

/// <summary>
/// The legitimate traffic's payload: <c>i64 send timestamp | u32 sender | u32 index | filler derived from sender and
/// index</c>, so the receiver checks content, order and count, and measures latency, without trusting the sieve.
/// </summary>
internal static class LegitimatePayload
{
    public const int HeaderBytes = 16;

    public static byte[] Create(int sender, int index, int size)
    {
        var b = new byte[size];
        BinaryPrimitives.WriteInt64LittleEndian(b, Stopwatch.GetTimestamp());
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(8), sender);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(12), index);
        Fill(b.AsSpan(HeaderBytes), sender, index);
        return b;
    }

    /// <summary>The claimed sender and index, or null when the payload is not legitimate traffic as sent (short or altered).</summary>
    public static (long Stamp, int Sender, int Index)? Read(ReadOnlySpan<byte> b)
    {
        if (b.Length < HeaderBytes)
        {
            return null;
        }
        var sender = BinaryPrimitives.ReadInt32LittleEndian(b[8..]);
        var index = BinaryPrimitives.ReadInt32LittleEndian(b[12..]);
        Span<byte> expected = stackalloc byte[Math.Min(b.Length - HeaderBytes, 256)];
        Fill(expected, sender, index);
        for (var i = HeaderBytes; i < b.Length; i++)
        {
            if (b[i] != expected[(i - HeaderBytes) % expected.Length])
            {
                return null;
            }
        }
        return (BinaryPrimitives.ReadInt64LittleEndian(b), sender, index);
    }

    private static void Fill(Span<byte> filler, int sender, int index)
    {
        for (var i = 0; i < filler.Length; i++)
        {
            filler[i] = (byte)(sender * 31 + index * 7 + (i % 256));
        }
    }
}
