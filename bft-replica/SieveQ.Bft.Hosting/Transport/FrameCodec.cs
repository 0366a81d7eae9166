using System.Buffers;
using System.Buffers.Binary;
using SieveQ.Bft.Codec;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// Frame layout after the handshake (SQLINK/v3):
/// <code>[u32 length of what follows][u64 sequence][AES-256-GCM ciphertext of the body][16-byte GCM tag]</code>
/// Length and sequence travel in clear as the AEAD's associated data (a reader must bound the length before
/// buffering, and the sequence names the nonce); the body is encrypted, so payment and plant data on the
/// ordering links are not readable on the wire. The body is one or more messages, each
/// <c>[u32 length][encoded message]</c>: a sender coalesces whatever is queued for a peer into one frame, so
/// under load one AEAD call and one syscall cover many messages. The sequence must be exactly the next
/// expected one and is also the nonce, so a replayed, dropped or reordered frame fails and breaks the link.
/// </summary>
public static class FrameCodec
{
    public const int LengthBytes = 4;
    public const int SequenceBytes = 8;
    public const int TagBytes = FrameCipher.TagBytes;
    public const int HeaderBytes = LengthBytes + SequenceBytes;
    public const int Overhead = HeaderBytes + TagBytes;
    public const int RecordHeaderBytes = 4;
    public const int MinLength = SequenceBytes + RecordHeaderBytes + TagBytes;
    public const int MaxBodyBytes = WireLimits.MaxFrameBytes;
    public const int MaxLength = SequenceBytes + MaxBodyBytes + TagBytes;

    /// <summary>The part of a frame of <paramref name="frame"/>'s size that holds the body.</summary>
    public static Span<byte> BodyOf(Span<byte> frame) => frame[HeaderBytes..^TagBytes];

    /// <summary>Bytes of body (plaintext) in a whole frame of <paramref name="frameBytes"/> bytes.</summary>
    public static int BodyLength(int frameBytes) => frameBytes - Overhead;

    /// <summary>Writes one message record (length prefix and bytes) at the start of <paramref name="destination"/>.</summary>
    public static int WriteRecord(Span<byte> destination, ReadOnlySpan<byte> message)
    {
        BinaryPrimitives.WriteInt32LittleEndian(destination, message.Length);
        message.CopyTo(destination[RecordHeaderBytes..]);
        return RecordHeaderBytes + message.Length;
    }

    /// <summary>Fills in length and sequence of a frame whose body is already written, encrypts the body in place and appends the tag.</summary>
    public static void SealInPlace(Span<byte> frame, ulong sequence, FrameCipher cipher)
    {
        if (frame.Length - Overhead > MaxBodyBytes || frame.Length < Overhead + RecordHeaderBytes)
        {
            throw new ArgumentException($"frame of {frame.Length} bytes is outside the frame limits", nameof(frame));
        }
        BinaryPrimitives.WriteUInt32LittleEndian(frame, (uint)(frame.Length - LengthBytes));
        BinaryPrimitives.WriteUInt64LittleEndian(frame[LengthBytes..], sequence);
        cipher.Seal(sequence, frame[..HeaderBytes], frame[HeaderBytes..^TagBytes], frame[^TagBytes..]);
    }

    /// <summary>Seals a single message as a whole frame (exactly message + <see cref="Overhead"/> + 4 bytes).</summary>
    public static void Seal(Span<byte> destination, ulong sequence, ReadOnlySpan<byte> message, FrameCipher cipher)
    {
        WriteRecord(BodyOf(destination), message);
        SealInPlace(destination, sequence, cipher);
    }

    public static int SingleMessageFrameSize(int messageBytes) => Overhead + RecordHeaderBytes + messageBytes;

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

    /// <summary>
    /// Checks length and sequence of a whole frame and decrypts its body into <paramref name="body"/>
    /// (<see cref="BodyLength"/> bytes; it may be the frame's own body bytes, decrypting in place).
    /// False when the frame is not the next one or its tag does not match.
    /// </summary>
    public static bool TryOpen(ReadOnlySpan<byte> frame, ulong expectedSequence, FrameCipher cipher, Span<byte> body)
    {
        if (frame.Length < Overhead || BinaryPrimitives.ReadUInt32LittleEndian(frame) != frame.Length - LengthBytes
            || body.Length != BodyLength(frame.Length))
        {
            return false;
        }
        // The sequence is public, so checking it before the AEAD leaks nothing and spares a decryption of a replay.
        if (BinaryPrimitives.ReadUInt64LittleEndian(frame[LengthBytes..]) != expectedSequence)
        {
            return false;
        }
        return cipher.TryOpen(expectedSequence, frame[..HeaderBytes], frame[HeaderBytes..^TagBytes], frame[^TagBytes..], body);
    }

    /// <summary>
    /// Takes the next message record off the front of an authenticated body. False at the end of the body;
    /// a record that claims more bytes than remain, or an empty one, is malformed.
    /// </summary>
    public static bool TryNextRecord(ref ReadOnlySpan<byte> body, out ReadOnlySpan<byte> message)
    {
        message = default;
        if (body.IsEmpty)
        {
            return false;
        }
        if (body.Length < RecordHeaderBytes)
        {
            throw new MalformedMessageException("truncated message record header");
        }
        var length = BinaryPrimitives.ReadInt32LittleEndian(body);
        if (length <= 0 || length > body.Length - RecordHeaderBytes)
        {
            throw new MalformedMessageException($"message record of {length} bytes in a body of {body.Length}");
        }
        message = body.Slice(RecordHeaderBytes, length);
        body = body[(RecordHeaderBytes + length)..];
        return true;
    }
}
