using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// One approved message in a replica's output batch. <see cref="RouteSeq"/> numbers the approved
/// messages of one (sender, receiver) route contiguously, in agreed order; the post-SQ votes and
/// delivers by it (a sender's own sequence numbers have gaps at a receiver: messages to other
/// receivers, rule denials). <see cref="Body"/> is present only from the designated replica.
/// </summary>
public sealed record OutputItem(int Sender, long SenderSeq, long RouteSeq, Digest DataDigest, ReadOnlyMemory<byte>? Body);

/// <summary>
/// A batch of approved messages from one replica to one receiver, one MAC over the whole batch with
/// the (replica, receiver) key. <see cref="BatchNo"/> is agreed (same on every replica) and picks the
/// designated replica that includes bodies.
/// </summary>
public sealed record ReplicaOutput(int Replica, int Receiver, long BatchNo, IReadOnlyList<OutputItem> Items, uint KeyEpoch);

/// <summary>
/// Layout: <c>u8 kind=0x20 | u32 replica | u32 receiver | u64 batchNo | u32 count |
/// count x (u32 sender | u64 senderSeq | u64 routeSeq | 32 digest | u8 hasBody | [u32 len | body]) |
/// u32 keyEpoch | 32 HMAC</c>.
/// </summary>
public static class ReplicaOutputCodec
{
    private const int ItemFixedBytes = 4 + 8 + 8 + 32 + 1;

    public static byte[] Encode(int replica, int receiver, long batchNo, IReadOnlyList<OutputItem> items, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(items);
        ArgumentNullException.ThrowIfNull(ring);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(items.Count, EnvelopeLimits.MaxItems);
        var size = 21 + MacTrailer.Size;
        foreach (var i in items)
        {
            size += ItemFixedBytes + (i.Body is { } b ? 4 + b.Length : 0);
        }
        using var w = new CanonicalWriter(size);
        w.U8((byte)StructureKind.ReplicaOutput);
        w.Id(replica);
        w.Id(receiver);
        w.Seq(batchNo);
        w.Id(items.Count);
        foreach (var i in items)
        {
            w.Id(i.Sender);
            w.Seq(i.SenderSeq);
            w.Seq(i.RouteSeq);
            i.DataDigest.CopyTo(w.Reserve(Digest.Size));
            w.Bool(i.Body.HasValue);
            if (i.Body is { } body)
            {
                w.Bytes(body.Span);
            }
        }
        MacTrailer.Append(w, DomainTags.ReplicaOutput, ring);
        return w.ToArray();
    }

    /// <summary>Decodes the structure; bodies slice the input. The MAC is checked with <see cref="VerifyMac"/>.</summary>
    public static ReplicaOutput Decode(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.ReplicaOutput);
        var replica = r.Id("replica");
        var receiver = r.Id("receiver");
        var batchNo = r.Seq("batchNo");
        var n = r.Count(EnvelopeLimits.MaxItems, "item count");
        if (r.Remaining < (long)n * ItemFixedBytes)
        {
            throw new MalformedEnvelopeException($"item count {n} exceeds the bytes present");
        }
        var items = new OutputItem[n];
        for (var i = 0; i < n; i++)
        {
            var sender = r.Id("sender");
            var senderSeq = r.Seq("senderSeq");
            var routeSeq = r.Seq("routeSeq");
            if (senderSeq < 1 || routeSeq < 1)
            {
                throw new MalformedEnvelopeException("sequence numbers start at 1");
            }
            var digest = new Digest(r.Take(Digest.Size, "digest"));
            ReadOnlyMemory<byte>? body = null;
            if (r.Bool("hasBody"))
            {
                var len = r.Count(EnvelopeLimits.MaxDataBytes, "body length");
                var at = r.Position;
                r.Take(len, "body");
                body = bytes.Slice(at, len);
            }
            items[i] = new OutputItem(sender, senderSeq, routeSeq, digest, body);
        }
        var epoch = MacTrailer.Read(ref r);
        r.End("replica output");
        return new ReplicaOutput(replica, receiver, batchNo, items, epoch);
    }

    public static bool VerifyMac(ReadOnlySpan<byte> bytes, MacKeyRing ring) => MacTrailer.Verify(bytes, DomainTags.ReplicaOutput, ring);
}
