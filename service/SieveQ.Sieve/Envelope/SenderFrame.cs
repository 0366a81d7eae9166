using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// What a sender-SQ sends to one pre-SQ: a body (a <see cref="SenderMessage"/> or an
/// <see cref="AckRequest"/>, exactly as it will be forwarded) closed by the MAC for that pre-SQ.
/// The pre-SQ id is inside the MAC, so a frame cannot be redirected to another pre-SQ.
/// </summary>
public sealed record SenderFrame(int PreSq, ReadOnlyMemory<byte> Body, uint KeyEpoch)
{
    public StructureKind BodyKind => (StructureKind)Body.Span[0];
}

/// <summary>Layout: <c>u8 kind=0x08 | u32 preSq | u32 len | body | u32 keyEpoch | 32 HMAC</c>.</summary>
public static class SenderFrameCodec
{
    public static byte[] Encode(int preSq, ReadOnlySpan<byte> body, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(ring);
        using var w = new CanonicalWriter(body.Length + 9 + MacTrailer.Size);
        w.U8((byte)StructureKind.SenderFrame);
        w.Id(preSq);
        w.Bytes(body);
        MacTrailer.Append(w, DomainTags.SenderFrameMac, ring);
        return w.ToArray();
    }

    /// <summary>Structure only: the MAC is checked separately (stage (c)), after whitelist and window.</summary>
    public static SenderFrame Decode(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.SenderFrame);
        var preSq = r.Id("preSq");
        var len = r.Count(EnvelopeLimits.MaxSenderFrameBodyBytes, "body length");
        var at = r.Position;
        r.Take(len, "body");
        if (len == 0)
        {
            throw new MalformedEnvelopeException("frame body is empty");
        }
        var kind = (StructureKind)bytes.Span[at];
        if (kind is not (StructureKind.SenderMessage or StructureKind.AckRequest))
        {
            throw new MalformedEnvelopeException($"frame body kind 0x{(byte)kind:x2} is not a sender message or ACKREQ");
        }
        var epoch = MacTrailer.Read(ref r);
        r.End("sender frame");
        return new SenderFrame(preSq, bytes.Slice(at, len), epoch);
    }

    public static bool VerifyMac(ReadOnlySpan<byte> frame, MacKeyRing ring) => MacTrailer.Verify(frame, DomainTags.SenderFrameMac, ring);
}
