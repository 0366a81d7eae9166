using System.Buffers.Binary;
using System.Text;

namespace SieveQ.Attacks.Attacks.Http2;

/// <summary>HTTP/2 frame types (RFC 9113 section 6) the raw attacker writes or reads.</summary>
internal enum FrameType : byte
{
    Data = 0x0,
    Headers = 0x1,
    RstStream = 0x3,
    Settings = 0x4,
    Ping = 0x6,
    GoAway = 0x7,
    WindowUpdate = 0x8,
    Continuation = 0x9,
}

/// <summary>
/// The bytes of HTTP/2 frames and of the few HPACK forms the attacker needs, written by hand: an attacker is not
/// bound by what a well-behaved client library lets it send (resets right after HEADERS, headers far over the
/// limits, bodies trickled a byte at a time).
/// </summary>
internal static class Http2Wire
{
    public const int FrameHeaderBytes = 9;
    public const int DefaultMaxFrameBytes = 16_384;
    public const byte EndStream = 0x1;
    public const byte Ack = 0x1;
    public const byte EndHeaders = 0x4;
    public const uint Cancel = 0x8;

    public static ReadOnlySpan<byte> Preface => "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8;

    public static byte[] Frame(FrameType type, byte flags, int stream, ReadOnlySpan<byte> payload)
    {
        var b = new byte[FrameHeaderBytes + payload.Length];
        b[0] = (byte)(payload.Length >> 16);
        b[1] = (byte)(payload.Length >> 8);
        b[2] = (byte)payload.Length;
        b[3] = (byte)type;
        b[4] = flags;
        BinaryPrimitives.WriteInt32BigEndian(b.AsSpan(5), stream & int.MaxValue);
        payload.CopyTo(b.AsSpan(FrameHeaderBytes));
        return b;
    }

    /// <summary>SETTINGS: HEADER_TABLE_SIZE 0 (the server's HPACK then uses no dynamic table, so <see cref="HeaderBlock.Decode"/> needs none) and ENABLE_PUSH 0.</summary>
    public static byte[] ClientSettings()
    {
        var p = new byte[12];
        BinaryPrimitives.WriteUInt16BigEndian(p, 0x1);
        BinaryPrimitives.WriteUInt32BigEndian(p.AsSpan(2), 0);
        BinaryPrimitives.WriteUInt16BigEndian(p.AsSpan(6), 0x2);
        BinaryPrimitives.WriteUInt32BigEndian(p.AsSpan(8), 0);
        return Frame(FrameType.Settings, 0, 0, p);
    }

    public static byte[] Ping(long opaque, bool ack = false)
    {
        Span<byte> p = stackalloc byte[8];
        BinaryPrimitives.WriteInt64BigEndian(p, opaque);
        return Frame(FrameType.Ping, ack ? Ack : (byte)0, 0, p);
    }

    public static byte[] RstStream(int stream, uint code)
    {
        Span<byte> p = stackalloc byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(p, code);
        return Frame(FrameType.RstStream, 0, stream, p);
    }

    public static byte[] WindowUpdate(int stream, int increment)
    {
        Span<byte> p = stackalloc byte[4];
        BinaryPrimitives.WriteInt32BigEndian(p, increment);
        return Frame(FrameType.WindowUpdate, 0, stream, p);
    }

    /// <summary>A gRPC message prefix (uncompressed) declaring <paramref name="length"/> bytes, followed by <paramref name="body"/>.</summary>
    public static byte[] GrpcMessage(uint length, ReadOnlySpan<byte> body)
    {
        var b = new byte[5 + body.Length];
        BinaryPrimitives.WriteUInt32BigEndian(b.AsSpan(1), length);
        body.CopyTo(b.AsSpan(5));
        return b;
    }

    /// <summary>
    /// A gRPC POST's header block: :method POST and :scheme https from the static table, :path and :authority as
    /// literals with indexed names, then content-type, te and any <paramref name="extra"/> as literals with new names;
    /// nothing is indexed, nothing Huffman-coded.
    /// </summary>
    public static byte[] GrpcRequestHeaders(string authority, string path, IReadOnlyList<(string Name, string Value)>? extra = null)
    {
        var b = new List<byte> { 0x83, 0x87 };
        LiteralIndexedName(b, 4, path);
        LiteralIndexedName(b, 1, authority);
        LiteralNewName(b, "content-type", "application/grpc");
        LiteralNewName(b, "te", "trailers");
        foreach (var (name, value) in extra ?? [])
        {
            LiteralNewName(b, name, value);
        }
        return [.. b];
    }

    /// <summary>A header block as HEADERS plus as many CONTINUATION frames as the server's frame size needs.</summary>
    public static IEnumerable<byte[]> HeaderFrames(int stream, byte[] block, bool endStream)
    {
        var first = Math.Min(block.Length, DefaultMaxFrameBytes);
        yield return Frame(FrameType.Headers, (byte)((endStream ? EndStream : 0) | (first == block.Length ? EndHeaders : 0)), stream, block.AsSpan(0, first));
        for (var at = first; at < block.Length; at += DefaultMaxFrameBytes)
        {
            var n = Math.Min(DefaultMaxFrameBytes, block.Length - at);
            yield return Frame(FrameType.Continuation, at + n == block.Length ? EndHeaders : (byte)0, stream, block.AsSpan(at, n));
        }
    }

    private static void LiteralIndexedName(List<byte> b, int index, string value)
    {
        Integer(b, 0x00, 4, index);
        String(b, value);
    }

    private static void LiteralNewName(List<byte> b, string name, string value)
    {
        b.Add(0x00);
        String(b, name);
        String(b, value);
    }

    private static void String(List<byte> b, string s)
    {
        var bytes = Encoding.ASCII.GetBytes(s);
        Integer(b, 0x00, 7, bytes.Length);
        b.AddRange(bytes);
    }

    /// <summary>RFC 7541 section 5.1: an integer in an N-bit prefix, <paramref name="high"/> holding the bits above it.</summary>
    private static void Integer(List<byte> b, byte high, int prefixBits, int value)
    {
        var max = (1 << prefixBits) - 1;
        if (value < max)
        {
            b.Add((byte)(high | value));
            return;
        }
        b.Add((byte)(high | max));
        value -= max;
        while (value >= 128)
        {
            b.Add((byte)(value % 128 + 128));
            value /= 128;
        }
        b.Add((byte)value);
    }
}
