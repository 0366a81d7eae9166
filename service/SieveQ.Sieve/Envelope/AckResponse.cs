using System.Text;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Envelope;

/// <summary>Why the replicas took a message and did not queue it for its receiver.</summary>
public enum RejectionReason : byte
{
    /// <summary>The receiver is not in the enrolment the replicas run.</summary>
    ReceiverNotEnrolled = 1,

    /// <summary>The application rules (stage f) denied it; the rule text says which rule.</summary>
    RuleDenied = 2,
}

/// <summary>One of a sender's messages the replicas took and rejected: its number, why, and the rule's own words.</summary>
public sealed record MessageRejection(long Seq, RejectionReason Reason, string Rule);

/// <summary>
/// ACKRES <c>&lt;replica, sender, observedLossRate, deliveredUpTo, assignedPreSq, nonce, verdicts&gt;</c>, sent by
/// every replica back through a pre-SQ. The loss rate is in parts per million (integers keep replicas
/// byte-identical). <see cref="DeliveredUpTo"/> is the sender's contiguous prefix the replicas have
/// taken into agreed state; a sender counts a message acknowledged once f+1 replicas say so in answer to the same
/// ACKREQ. Every taken message numbered from <see cref="VerdictsFrom"/> to <see cref="DeliveredUpTo"/> was approved
/// unless <see cref="Rejections"/> lists it. The MAC is keyed per (replica, sender), so a pre-SQ relaying it cannot
/// alter it.
/// </summary>
public sealed record AckResponse(int Replica, int Sender, int LossPpm, long DeliveredUpTo, int AssignedPreSq, long Nonce, uint KeyEpoch)
{
    /// <summary>The lowest number whose verdict this answer tells (at most <see cref="DeliveredUpTo"/> + 1).</summary>
    public long VerdictsFrom { get; init; } = 1;

    /// <summary>The rejected messages in [<see cref="VerdictsFrom"/>, <see cref="DeliveredUpTo"/>], in ascending number order.</summary>
    public IReadOnlyList<MessageRejection> Rejections { get; init; } = [];

    public bool Equals(AckResponse? other) =>
        other is not null && Replica == other.Replica && Sender == other.Sender && LossPpm == other.LossPpm && KeyEpoch == other.KeyEpoch && SameStatement(other);

    public override int GetHashCode() => HashCode.Combine(Replica, Sender, DeliveredUpTo, Nonce, VerdictsFrom, Rejections.Count);

    /// <summary>Whether two answers say the same thing about the sender (all but the replica's id and key epoch).</summary>
    public bool SameStatement(AckResponse other) =>
        other is not null && DeliveredUpTo == other.DeliveredUpTo && AssignedPreSq == other.AssignedPreSq && Nonce == other.Nonce
        && VerdictsFrom == other.VerdictsFrom && Rejections.SequenceEqual(other.Rejections);
}

/// <summary>
/// Layout: <c>u8 kind=0x18 | u32 replica | u32 sender | u32 lossPpm | u64 deliveredUpTo | u32 assignedPreSq | u64 nonce
/// | u64 verdictsFrom | u32 count | count x (u64 seq | u8 reason | u32 len | rule UTF-8) | u32 keyEpoch | 32 HMAC</c>.
/// </summary>
public static class AckResponseCodec
{
    /// <summary>An ACKRES that reports no rejection.</summary>
    public const int Size = 1 + 4 + 4 + 4 + 8 + 4 + 8 + 8 + 4 + MacTrailer.Size;

    private static readonly UTF8Encoding StrictUtf8 = new(false, throwOnInvalidBytes: true);

    /// <summary>An ACKRES that says every message up to <paramref name="deliveredUpTo"/> was approved.</summary>
    public static byte[] Encode(int replica, int sender, int lossPpm, long deliveredUpTo, int assignedPreSq, long nonce, MacKeyRing ring) =>
        Encode(replica, sender, lossPpm, deliveredUpTo, assignedPreSq, nonce, 1, [], ring);

    public static byte[] Encode(int replica, int sender, int lossPpm, long deliveredUpTo, int assignedPreSq, long nonce,
        long verdictsFrom, IReadOnlyList<MessageRejection> rejections, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(ring);
        ArgumentNullException.ThrowIfNull(rejections);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(rejections.Count, EnvelopeLimits.MaxAckRejections);
        using var w = new CanonicalWriter(Size + rejections.Count * (13 + EnvelopeLimits.MaxRejectionRuleBytes));
        w.U8((byte)StructureKind.AckResponse);
        w.Id(replica);
        w.Id(sender);
        w.Id(lossPpm);
        w.Seq(deliveredUpTo);
        w.Id(assignedPreSq);
        w.Seq(nonce);
        w.Seq(verdictsFrom);
        w.Id(rejections.Count);
        foreach (var j in rejections)
        {
            w.Seq(j.Seq);
            w.U8((byte)j.Reason);
            w.Bytes(RuleBytes(j.Rule));
        }
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
        var from = r.Seq("verdictsFrom");
        if (from < 1 || from - 1 > delivered)
        {
            throw new MalformedEnvelopeException($"verdictsFrom {from} outside 1..deliveredUpTo + 1 ({delivered + 1})");
        }
        var count = r.Count(EnvelopeLimits.MaxAckRejections, "rejections");
        var rejections = new List<MessageRejection>(count);
        var previous = from - 1;
        for (var i = 0; i < count; i++)
        {
            var seq = r.Seq("rejected seq");
            if (seq <= previous || seq > delivered)
            {
                throw new MalformedEnvelopeException($"rejected seq {seq} not ascending inside verdictsFrom..deliveredUpTo");
            }
            previous = seq;
            var reason = r.U8("rejection reason");
            if (reason is not ((byte)RejectionReason.ReceiverNotEnrolled or (byte)RejectionReason.RuleDenied))
            {
                throw new MalformedEnvelopeException($"rejection reason {reason} unknown");
            }
            var rule = r.Bytes(EnvelopeLimits.MaxRejectionRuleBytes, "rejection rule");
            string text;
            try
            {
                text = StrictUtf8.GetString(rule);
            }
            catch (DecoderFallbackException e)
            {
                throw new MalformedEnvelopeException("rejection rule is not UTF-8", e);
            }
            rejections.Add(new MessageRejection(seq, (RejectionReason)reason, text));
        }
        var epoch = MacTrailer.Read(ref r);
        r.End("ACKRES");
        return new AckResponse(replica, sender, loss, delivered, assigned, nonce, epoch) { VerdictsFrom = from, Rejections = rejections };
    }

    public static bool VerifyMac(ReadOnlySpan<byte> bytes, MacKeyRing ring) => MacTrailer.Verify(bytes, DomainTags.AckResponse, ring);

    /// <summary>The rule text as it travels: UTF-8, cut at a character boundary to <see cref="EnvelopeLimits.MaxRejectionRuleBytes"/>.</summary>
    public static string Cut(string rule) => Encoding.UTF8.GetString(RuleBytes(rule));

    private static byte[] RuleBytes(string rule)
    {
        var bytes = Encoding.UTF8.GetBytes(rule ?? "");
        if (bytes.Length <= EnvelopeLimits.MaxRejectionRuleBytes)
        {
            return bytes;
        }
        var end = EnvelopeLimits.MaxRejectionRuleBytes;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80)
        {
            end--;
        }
        return bytes[..end];
    }
}
