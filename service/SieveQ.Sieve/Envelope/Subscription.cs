using System.Security.Cryptography;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// A request to one replica for a stream: a receiver's approved messages (kind 0x30, signed with the
/// receiver's key) or a pre-SQ's ACKRES relays (kind 0x31, signed with the pre-SQ's ordering-client
/// key). Integrity of what flows is protected by MACs anyway; the signature keeps strangers from
/// reading a receiver's traffic or displacing a live subscription. <see cref="TimeMs"/> is the
/// subscriber's clock; the replica refuses one outside its freshness window, so a captured
/// subscription cannot be replayed later.
/// </summary>
public sealed record Subscription(StructureKind Kind, int Subscriber, int Replica, long TimeMs, ReadOnlyMemory<byte> Signature, ReadOnlyMemory<byte> SignedRegion);

/// <summary>Layout: <c>u8 kind | u32 subscriber | u32 replica | i64 timeMs</c> (signed) <c>| 64 signature</c>.</summary>
public static class SubscriptionCodec
{
    public const int SignedBytes = 1 + 4 + 4 + 8;

    public static byte[] Encode(StructureKind kind, int subscriber, int replica, long timeMs, ECDsa key)
    {
        ArgumentNullException.ThrowIfNull(key);
        CheckKind(kind);
        using var w = new CanonicalWriter(SignedBytes + EnvelopeLimits.SignatureBytes);
        w.U8((byte)kind);
        w.Id(subscriber);
        w.Id(replica);
        w.I64(timeMs);
        w.Raw(key.SignData(TaggedHash.Concat(TagOf(kind), w.WrittenSpan), HashAlgorithmName.SHA256));
        return w.ToArray();
    }

    public static Subscription Decode(ReadOnlyMemory<byte> bytes, StructureKind expected)
    {
        CheckKind(expected);
        var r = new CanonicalReader(bytes.Span);
        r.Kind(expected);
        var subscriber = r.Id("subscriber");
        var replica = r.Id("replica");
        var time = r.I64("timeMs");
        r.Take(EnvelopeLimits.SignatureBytes, "signature");
        r.End("subscription");
        return new Subscription(expected, subscriber, replica, time, bytes.Slice(SignedBytes, EnvelopeLimits.SignatureBytes), bytes[..SignedBytes]);
    }

    /// <summary>Signature check plus the two things a replica must see: addressed to it, and fresh.</summary>
    public static bool IsValid(Subscription s, int replica, long nowMs, long freshnessMs, Func<ReadOnlyMemory<byte>, ReadOnlyMemory<byte>, bool> verify)
    {
        ArgumentNullException.ThrowIfNull(s);
        ArgumentNullException.ThrowIfNull(verify);
        // Compared without subtracting the claimed time, which may be anything: now - long.MinValue overflows.
        if (s.Replica != replica || s.TimeMs < nowMs - freshnessMs || s.TimeMs > nowMs + freshnessMs)
        {
            return false;
        }
        return verify(TaggedHash.Concat(TagOf(s.Kind), s.SignedRegion.Span), s.Signature);
    }

    private static byte[] TagOf(StructureKind kind) => kind == StructureKind.ReceiverSubscription ? DomainTags.ReceiverSubscription : DomainTags.PreSqSubscription;

    private static void CheckKind(StructureKind kind)
    {
        if (kind is not (StructureKind.ReceiverSubscription or StructureKind.PreSqSubscription))
        {
            throw new ArgumentOutOfRangeException(nameof(kind), "not a subscription kind");
        }
    }
}
