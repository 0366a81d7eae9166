using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Envelope;

/// <summary>A body the post-SQ wants: f+1 replicas vouched for the digest, but no body with it arrived.</summary>
public readonly record struct BodyWanted(int Sender, long RouteSeq, Digest DataDigest);

/// <summary>Post-SQ to one replica that voted for the digests: "send me these bodies".</summary>
public sealed record BodyFetchRequest(int Receiver, int Replica, long Nonce, IReadOnlyList<BodyWanted> Items, uint KeyEpoch);

/// <summary>A body a replica returns; the receiver recomputes its digest before using it.</summary>
public sealed record FetchedBody(int Sender, long RouteSeq, long SenderSeq, ReadOnlyMemory<byte> Body);

public sealed record BodyFetchResponse(int Replica, int Receiver, long Nonce, IReadOnlyList<FetchedBody> Items, uint KeyEpoch);

/// <summary>
/// Request: <c>u8 kind=0x21 | u32 receiver | u32 replica | u64 nonce | u32 count | count x (u32 sender | u64 routeSeq | 32 digest) | u32 keyEpoch | 32 HMAC</c>.
/// Response: <c>u8 kind=0x22 | u32 replica | u32 receiver | u64 nonce | u32 count | count x (u32 sender | u64 routeSeq | u64 senderSeq | u32 len | body) | u32 keyEpoch | 32 HMAC</c>.
/// Both are MACed with the (replica, receiver) key.
/// </summary>
public static class BodyFetchCodec
{
    public const int MaxFetchItems = 4096;

    public static byte[] EncodeRequest(int receiver, int replica, long nonce, IReadOnlyList<BodyWanted> items, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(items);
        ArgumentNullException.ThrowIfNull(ring);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(items.Count, MaxFetchItems);
        using var w = new CanonicalWriter(21 + 44 * items.Count + MacTrailer.Size);
        w.U8((byte)StructureKind.BodyFetchRequest);
        w.Id(receiver);
        w.Id(replica);
        w.Seq(nonce);
        w.Id(items.Count);
        foreach (var i in items)
        {
            w.Id(i.Sender);
            w.Seq(i.RouteSeq);
            i.DataDigest.CopyTo(w.Reserve(Digest.Size));
        }
        MacTrailer.Append(w, DomainTags.BodyFetchRequest, ring);
        return w.ToArray();
    }

    public static BodyFetchRequest DecodeRequest(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.BodyFetchRequest);
        var receiver = r.Id("receiver");
        var replica = r.Id("replica");
        var nonce = r.Seq("nonce");
        var n = r.Count(MaxFetchItems, "item count");
        if (r.Remaining < (long)n * 44)
        {
            throw new MalformedEnvelopeException($"item count {n} exceeds the bytes present");
        }
        var items = new BodyWanted[n];
        for (var i = 0; i < n; i++)
        {
            items[i] = new BodyWanted(r.Id("sender"), r.Seq("routeSeq"), new Digest(r.Take(Digest.Size, "digest")));
        }
        var epoch = MacTrailer.Read(ref r);
        r.End("body fetch request");
        return new BodyFetchRequest(receiver, replica, nonce, items, epoch);
    }

    public static byte[] EncodeResponse(int replica, int receiver, long nonce, IReadOnlyList<FetchedBody> items, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(items);
        ArgumentNullException.ThrowIfNull(ring);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(items.Count, MaxFetchItems);
        var size = 21 + MacTrailer.Size;
        foreach (var i in items)
        {
            size += 24 + i.Body.Length;
        }
        using var w = new CanonicalWriter(size);
        w.U8((byte)StructureKind.BodyFetchResponse);
        w.Id(replica);
        w.Id(receiver);
        w.Seq(nonce);
        w.Id(items.Count);
        foreach (var i in items)
        {
            w.Id(i.Sender);
            w.Seq(i.RouteSeq);
            w.Seq(i.SenderSeq);
            w.Bytes(i.Body.Span);
        }
        MacTrailer.Append(w, DomainTags.BodyFetchResponse, ring);
        return w.ToArray();
    }

    public static BodyFetchResponse DecodeResponse(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.BodyFetchResponse);
        var replica = r.Id("replica");
        var receiver = r.Id("receiver");
        var nonce = r.Seq("nonce");
        var n = r.Count(MaxFetchItems, "item count");
        if (r.Remaining < (long)n * 24)
        {
            throw new MalformedEnvelopeException($"item count {n} exceeds the bytes present");
        }
        var items = new FetchedBody[n];
        for (var i = 0; i < n; i++)
        {
            var sender = r.Id("sender");
            var routeSeq = r.Seq("routeSeq");
            var senderSeq = r.Seq("senderSeq");
            var len = r.Count(EnvelopeLimits.MaxDataBytes, "body length");
            var at = r.Position;
            r.Take(len, "body");
            items[i] = new FetchedBody(sender, routeSeq, senderSeq, bytes.Slice(at, len));
        }
        var epoch = MacTrailer.Read(ref r);
        r.End("body fetch response");
        return new BodyFetchResponse(replica, receiver, nonce, items, epoch);
    }

    public static bool VerifyRequestMac(ReadOnlySpan<byte> bytes, MacKeyRing ring) => MacTrailer.Verify(bytes, DomainTags.BodyFetchRequest, ring);

    public static bool VerifyResponseMac(ReadOnlySpan<byte> bytes, MacKeyRing ring) => MacTrailer.Verify(bytes, DomainTags.BodyFetchResponse, ring);
}
