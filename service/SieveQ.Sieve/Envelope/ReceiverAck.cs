using System.Security.Cryptography;

namespace SieveQ.Sieve.Envelope;

/// <summary>One sender's cursor in a receiver acknowledgement: every route sequence up to it is delivered.</summary>
public readonly record struct DeliveredCursor(int Sender, long DeliveredUpTo);

/// <summary>
/// The post-SQ's acknowledgement <c>&lt;receiver, per-sender delivered-up-to&gt;</c>. It changes replica
/// state (queues are trimmed), so it is ordered like any other request and therefore signed by the
/// receiver: a per-replica MAC would let a faulty receiver show different replicas different acks.
/// </summary>
public sealed record ReceiverAck(int Receiver, IReadOnlyList<DeliveredCursor> Cursors, ReadOnlyMemory<byte> Signature, ReadOnlyMemory<byte> SignedRegion);

/// <summary>
/// Layout: <c>u8 kind=0x04 | u32 receiver | u32 count | count x (u32 sender | u64 deliveredUpTo)</c>
/// (signed; senders strictly increasing) <c>| 64 signature</c>.
/// </summary>
public static class ReceiverAckCodec
{
    public static byte[] Encode(int receiver, IReadOnlyList<DeliveredCursor> cursors, ECDsa key)
    {
        ArgumentNullException.ThrowIfNull(cursors);
        ArgumentNullException.ThrowIfNull(key);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(cursors.Count, EnvelopeLimits.MaxAckEntries);
        using var w = new CanonicalWriter(9 + 12 * cursors.Count + EnvelopeLimits.SignatureBytes);
        w.U8((byte)StructureKind.ReceiverAck);
        w.Id(receiver);
        w.Id(cursors.Count);
        var previous = -1;
        foreach (var c in cursors)
        {
            if (c.Sender <= previous)
            {
                throw new ArgumentException("cursors must be sorted by sender, without repeats", nameof(cursors));
            }
            previous = c.Sender;
            w.Id(c.Sender);
            w.Seq(c.DeliveredUpTo);
        }
        w.Raw(key.SignData(TaggedHash.Concat(DomainTags.ReceiverAck, w.WrittenSpan), HashAlgorithmName.SHA256));
        return w.ToArray();
    }

    public static ReceiverAck Decode(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.ReceiverAck);
        var receiver = r.Id("receiver");
        var n = r.Count(EnvelopeLimits.MaxAckEntries, "cursor count");
        if (r.Remaining < (long)n * 12)
        {
            throw new MalformedEnvelopeException($"cursor count {n} exceeds the bytes present");
        }
        var cursors = new DeliveredCursor[n];
        var previous = -1;
        for (var i = 0; i < n; i++)
        {
            var s = r.Id("cursor sender");
            if (s <= previous)
            {
                throw new MalformedEnvelopeException("cursors not strictly sorted by sender");
            }
            previous = s;
            cursors[i] = new DeliveredCursor(s, r.Seq("deliveredUpTo"));
        }
        var region = r.Position;
        r.Take(EnvelopeLimits.SignatureBytes, "signature");
        r.End("receiver ack");
        return new ReceiverAck(receiver, cursors, bytes.Slice(region, EnvelopeLimits.SignatureBytes), bytes[..region]);
    }

    public static bool VerifySignature(ReceiverAck ack, ECDsa publicKey)
    {
        ArgumentNullException.ThrowIfNull(ack);
        ArgumentNullException.ThrowIfNull(publicKey);
        return publicKey.VerifyData(TaggedHash.Concat(DomainTags.ReceiverAck, ack.SignedRegion.Span), ack.Signature.Span, HashAlgorithmName.SHA256);
    }
}
