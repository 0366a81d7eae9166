using System.Buffers.Binary;
using SieveQ.Sieve.Envelope;

namespace SieveQ.PreSq;

/// <summary>The sender messages an ordering-request payload carries, by sender and number.</summary>
internal static class OrderingPayloadMessages
{
    /// <summary>Every sender message of <paramref name="payload"/>; none when it does not parse (this pre-SQ built it, so it always does).</summary>
    public static List<UntakenMessage> Of(ReadOnlyMemory<byte> payload)
    {
        OrderingRequest request;
        try
        {
            request = OrderingRequestCodec.Decode(payload);
        }
        catch (MalformedEnvelopeException)
        {
            return [];
        }
        var messages = new List<UntakenMessage>(request.Items.Count);
        foreach (var item in request.Items)
        {
            // Sender message: u8 kind | u32 sender | u64 seq | ...
            var span = item.Span;
            if (span.Length >= 13 && span[0] == (byte)StructureKind.SenderMessage)
            {
                messages.Add(new UntakenMessage((int)BinaryPrimitives.ReadUInt32LittleEndian(span[1..]), (long)BinaryPrimitives.ReadUInt64LittleEndian(span[5..])));
            }
        }
        return messages;
    }
}
