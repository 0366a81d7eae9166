using System.Buffers;
using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Bft.Codec;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// Authenticated frame layout after the handshake:
/// <code>[u32 length of what follows][u64 sequence][payload][HMAC-SHA256 tag over length||sequence||payload]</code>
/// The sequence must be exactly the next expected one, so a replayed, dropped or reordered frame breaks
/// the MAC check and the link; the length is bounded before anything is buffered.
/// </summary>
public static class FrameCodec
{
    public const int LengthBytes = 4;
    public const int SequenceBytes = 8;
    public const int TagBytes = 32;
    public const int Overhead = LengthBytes + SequenceBytes + TagBytes;
    public const int MinLength = SequenceBytes + TagBytes;
    public const int MaxLength = WireLimits.MaxFrameBytes + SequenceBytes + TagBytes;

    /// <summary>Writes one sealed frame into <paramref name="destination"/> (exactly payload + <see cref="Overhead"/> bytes).</summary>
    public static void Seal(Span<byte> destination, ulong sequence, ReadOnlySpan<byte> payload, IncrementalHash mac)
    {
        if (payload.Length > WireLimits.MaxFrameBytes)
        {
            throw new ArgumentException($"payload of {payload.Length} bytes is above the frame limit", nameof(payload));
        }
        var body = LengthBytes + SequenceBytes + payload.Length;
        BinaryPrimitives.WriteUInt32LittleEndian(destination, (uint)(SequenceBytes + payload.Length + TagBytes));
        BinaryPrimitives.WriteUInt64LittleEndian(destination[LengthBytes..], sequence);
        payload.CopyTo(destination[(LengthBytes + SequenceBytes)..]);
        mac.AppendData(destination[..body]);
        if (!mac.TryGetHashAndReset(destination.Slice(body, TagBytes), out _))
        {
            throw new CryptographicException("HMAC output did not fit");
        }
    }

    /// <summary>
    /// Slices one whole frame (length prefix included) off the front of <paramref name="buffer"/>.
    /// False when more bytes are needed; a length outside the limits is malformed.
    /// </summary>
    public static bool TryReadFrame(ref ReadOnlySequence<byte> buffer, out ReadOnlySequence<byte> frame)
    {
        frame = default;
        if (buffer.Length < LengthBytes)
        {
            return false;
        }
        Span<byte> len = stackalloc byte[LengthBytes];
        buffer.Slice(0, LengthBytes).CopyTo(len);
        var length = BinaryPrimitives.ReadUInt32LittleEndian(len);
        if (length < MinLength || length > MaxLength)
        {
            throw new MalformedMessageException($"frame length {length} outside [{MinLength}, {MaxLength}]");
        }
        var total = LengthBytes + (long)length;
        if (buffer.Length < total)
        {
            return false;
        }
        frame = buffer.Slice(0, total);
        buffer = buffer.Slice(total);
        return true;
    }

    /// <summary>Checks sequence and tag of a whole frame; returns the payload range on success.</summary>
    public static bool TryOpen(ReadOnlySpan<byte> frame, ulong expectedSequence, IncrementalHash mac, out Range payload)
    {
        payload = default;
        if (frame.Length < Overhead || BinaryPrimitives.ReadUInt32LittleEndian(frame) != frame.Length - LengthBytes)
        {
            return false;
        }
        var body = frame.Length - TagBytes;
        Span<byte> tag = stackalloc byte[TagBytes];
        mac.AppendData(frame[..body]);
        if (!mac.TryGetHashAndReset(tag, out _) || !CryptographicOperations.FixedTimeEquals(tag, frame[body..]))
        {
            return false;
        }
        if (BinaryPrimitives.ReadUInt64LittleEndian(frame[LengthBytes..]) != expectedSequence)
        {
            return false;
        }
        payload = new Range(LengthBytes + SequenceBytes, body);
        return true;
    }
}
