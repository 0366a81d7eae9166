using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// The <c>u32 keyEpoch || HMAC-SHA256</c> trailer that closes every MACed structure. The MAC covers
/// the structure's tag and every byte before the MAC, the epoch included, exactly as on the wire.
/// </summary>
public static class MacTrailer
{
    public const int Size = 4 + MacKeyRing.TagBytes;

    /// <summary>Appends epoch and MAC to what the writer holds.</summary>
    public static void Append(CanonicalWriter w, ReadOnlySpan<byte> tag, MacKeyRing ring)
    {
        w.U32(ring.CurrentEpoch);
        var macAt = w.Skip(MacKeyRing.TagBytes);
        Span<byte> mac = stackalloc byte[MacKeyRing.TagBytes];
        ring.Sign(tag, w.WrittenSpan[..macAt], mac);
        mac.CopyTo(w.Slot(macAt, MacKeyRing.TagBytes));
    }

    /// <summary>Checks the trailer of a whole structure. Too short to hold one is simply not valid.</summary>
    public static bool Verify(ReadOnlySpan<byte> structure, ReadOnlySpan<byte> tag, MacKeyRing ring)
    {
        if (structure.Length < Size)
        {
            return false;
        }
        var epoch = System.Buffers.Binary.BinaryPrimitives.ReadUInt32LittleEndian(structure[^Size..]);
        return ring.Verify(epoch, tag, structure[..^MacKeyRing.TagBytes], structure[^MacKeyRing.TagBytes..]);
    }

    /// <summary>Reads the epoch and MAC at the end of a decoder's input, leaving the reader at the end.</summary>
    public static uint Read(ref CanonicalReader r)
    {
        var epoch = r.U32("keyEpoch");
        r.Take(MacKeyRing.TagBytes, "mac");
        return epoch;
    }
}
