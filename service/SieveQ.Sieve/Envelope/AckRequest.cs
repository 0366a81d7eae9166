using System.Security.Cryptography;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// ACKREQ <c>&lt;sender, lastSentSeq, lowestPending, nonce&gt;</c>, signed by the sender so that a pre-SQ
/// can neither forge nor alter it. The nonce must grow from one ACKREQ to the next; replicas ignore
/// stale ones. <see cref="LowestPending"/> (not in the paper) is the lowest number the sender still
/// waits an acknowledgement for: everything below is settled, including numbers it reserved before a
/// crash and never used, which would otherwise hold the acknowledged prefix back for good.
/// </summary>
public sealed record AckRequest(int Sender, long LastSentSeq, long LowestPending, long Nonce, ReadOnlyMemory<byte> Signature, ReadOnlyMemory<byte> SignedRegion);

/// <summary>Layout: <c>u8 kind=0x02 | u32 sender | u64 lastSentSeq | u64 lowestPending | u64 nonce</c> (signed) <c>| 64 signature</c>.</summary>
public static class AckRequestCodec
{
    public const int SignedBytes = 1 + 4 + 8 + 8 + 8;

    public static byte[] Encode(int sender, long lastSentSeq, long lowestPending, long nonce, ECDsa key)
    {
        ArgumentNullException.ThrowIfNull(key);
        using var w = new CanonicalWriter(SignedBytes + EnvelopeLimits.SignatureBytes);
        w.U8((byte)StructureKind.AckRequest);
        w.Id(sender);
        w.Seq(lastSentSeq);
        w.Seq(lowestPending);
        w.Seq(nonce);
        var sig = key.SignData(TaggedHash.Concat(DomainTags.AckRequest, w.WrittenSpan), HashAlgorithmName.SHA256);
        w.Raw(sig);
        return w.ToArray();
    }

    public static AckRequest Decode(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.AckRequest);
        var sender = r.Id("sender");
        var last = r.Seq("lastSentSeq");
        var lowest = r.Seq("lowestPending");
        if (lowest < 1 || lowest > last + 1)
        {
            throw new MalformedEnvelopeException($"lowestPending {lowest} outside 1..lastSentSeq+1");
        }
        var nonce = r.Seq("nonce");
        r.Take(EnvelopeLimits.SignatureBytes, "signature");
        r.End("ACKREQ");
        return new AckRequest(sender, last, lowest, nonce, bytes.Slice(SignedBytes, EnvelopeLimits.SignatureBytes), bytes[..SignedBytes]);
    }

    public static bool VerifySignature(AckRequest request, ECDsa publicKey)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(publicKey);
        return publicKey.VerifyData(TaggedHash.Concat(DomainTags.AckRequest, request.SignedRegion.Span), request.Signature.Span, HashAlgorithmName.SHA256);
    }
}
