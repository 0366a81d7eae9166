using System.Buffers;
using System.Buffers.Binary;
using System.IO.Pipelines;
using Google.Protobuf;

namespace SieveQ.Transport;

/// <summary>
/// gRPC length-prefixed messages: one flag byte (0 = not compressed; compression is refused) and a
/// big-endian 32-bit length. Lengths are checked against a bound before any byte is buffered.
/// </summary>
public static class GrpcFraming
{
    public const int HeaderSize = 5;
    public const int DefaultMaxMessageBytes = 4 * 1024 * 1024;

    public static void Write(PipeWriter writer, IMessage message)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentNullException.ThrowIfNull(message);
        var size = message.CalculateSize();
        var span = writer.GetSpan(HeaderSize + size);
        span[0] = 0;
        BinaryPrimitives.WriteUInt32BigEndian(span[1..], (uint)size);
        message.WriteTo(span.Slice(HeaderSize, size));
        writer.Advance(HeaderSize + size);
    }

    /// <summary>
    /// Reads one message, or null at a clean end of stream. Throws <see cref="GrpcCallException"/>
    /// for a compressed, oversized or truncated message.
    /// </summary>
    public static async ValueTask<T?> ReadAsync<T>(PipeReader reader, MessageParser<T> parser, int maxMessageBytes, CancellationToken ct)
        where T : class, IMessage<T>
    {
        ArgumentNullException.ThrowIfNull(reader);
        ArgumentNullException.ThrowIfNull(parser);
        while (true)
        {
            var result = await reader.ReadAsync(ct).ConfigureAwait(false);
            var buffer = result.Buffer;
            if (TryParse(ref buffer, parser, maxMessageBytes, out var message))
            {
                reader.AdvanceTo(buffer.Start);
                return message;
            }
            if (result.IsCompleted || result.IsCanceled)
            {
                var leftover = buffer.Length;
                reader.AdvanceTo(buffer.End);
                if (leftover != 0)
                {
                    throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"stream ended inside a message ({leftover} bytes left)");
                }
                return null;
            }
            reader.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    internal static bool TryParse<T>(ref ReadOnlySequence<byte> buffer, MessageParser<T> parser, int maxMessageBytes, out T? message)
        where T : class, IMessage<T>
    {
        message = null;
        if (buffer.Length < HeaderSize)
        {
            return false;
        }
        Span<byte> header = stackalloc byte[HeaderSize];
        buffer.Slice(0, HeaderSize).CopyTo(header);
        if (header[0] != 0)
        {
            throw new GrpcCallException(GrpcStatusCode.Unimplemented, "compressed messages are not accepted");
        }
        var length = BinaryPrimitives.ReadUInt32BigEndian(header[1..]);
        if (length > (uint)maxMessageBytes)
        {
            throw new GrpcCallException(GrpcStatusCode.ResourceExhausted, $"message of {length} bytes exceeds the limit of {maxMessageBytes}");
        }
        if (buffer.Length < HeaderSize + length)
        {
            return false;
        }
        var body = buffer.Slice(HeaderSize, length);
        try
        {
            message = parser.ParseFrom(body);
        }
        catch (InvalidProtocolBufferException e)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"malformed message: {e.Message}");
        }
        buffer = buffer.Slice(body.End);
        return true;
    }
}
