using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// ACKRES <c>&lt;replica, sender, observedLossRate, deliveredUpTo, assignedPreSq, nonce&gt;</c>, sent by
/// every replica back through a pre-SQ. The loss rate is in parts per million (integers keep replicas
/// byte-identical). <see cref="DeliveredUpTo"/> is the sender's contiguous prefix the replicas have
/// taken into agreed state; a sender counts a message acknowledged once f+1 replicas say so. The MAC
/// is keyed per (replica, sender), so a pre-SQ relaying it cannot alter it.
/// </summary>
public sealed record AckResponse(int Replica, int Sender, int LossPpm, long DeliveredUpTo, int AssignedPreSq, long Nonce, uint KeyEpoch);

/// <summary>
/// Layout: <c>u8 kind=0x18 | u32 replica | u32 sender | u32 lossPpm | u64 deliveredUpTo | u32 assignedPreSq | u64 nonce | u32 keyEpoch | 32 HMAC</c>.
/// </summary>
public static class AckResponseCodec
{
    public const int Size = 1 + 4 + 4 + 4 + 8 + 4 + 8 + MacTrailer.Size;

    public static byte[] Encode(int replica, int sender, int lossPpm, long deliveredUpTo, int assignedPreSq, long nonce, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(ring);
        using var w = new CanonicalWriter(Size);
        w.U8((byte)StructureKind.AckResponse);
        w.Id(replica);
        w.Id(sender);
        w.Id(lossPpm);
        w.Seq(deliveredUpTo);
        w.Id(assignedPreSq);
        w.Seq(nonce);
        MacTrailer.Append(w, DomainTags.AckResponse, ring);
        return w.ToArray();
    }

    public static AckResponse Decode(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.AckResponse);
        var replica = r.Id("replica");
        var sender = r.Id("sender");
        var loss = r.Id("lossPpm");
        if (loss > 1_000_000)
        {
            throw new MalformedEnvelopeException($"lossPpm {loss} above one million");
        }
        var delivered = r.Seq("deliveredUpTo");
        var assigned = r.Id("assignedPreSq");
        var nonce = r.Seq("nonce");
        var epoch = MacTrailer.Read(ref r);
        r.End("ACKRES");
        return new AckResponse(replica, sender, loss, delivered, assigned, nonce, epoch);
    }

    public static bool VerifyMac(ReadOnlySpan<byte> bytes, MacKeyRing ring) => MacTrailer.Verify(bytes, DomainTags.AckResponse, ring);
}
