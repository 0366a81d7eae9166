using System.Security.Cryptography;
using System.Text;

namespace SieveQ.Sieve.Envelope;

/// <summary>Which kind of party an id lease is for.</summary>
public enum LeaseParty : byte
{
    Sender = 1,
    Receiver = 2,
}

/// <summary>Hold (take, or keep, the lease) or release it.</summary>
public enum LeaseOp : byte
{
    Hold = 1,
    Release = 2,
}

/// <summary>
/// A process's claim on a sender or receiver id (kind 0x09), signed with the party's own signing key, so only a holder
/// of the id's key can claim it. <see cref="Holder"/> is a random id per process run and <see cref="Label"/> says who
/// it is to a person ("host pid 1234 ..."); <see cref="RequestedAtMs"/> is the claimant's clock, checked against the
/// agreed time and required to grow per id, so a captured claim cannot be replayed.
/// </summary>
public sealed record IdLeaseRequest(LeaseParty Party, int Id, LeaseOp Op, ReadOnlyMemory<byte> Holder, string Label, long RequestedAtMs,
    ReadOnlyMemory<byte> Signature, ReadOnlyMemory<byte> SignedRegion);

/// <summary>What the replicas decided on a lease request.</summary>
public enum LeaseOutcome : byte
{
    /// <summary>The claimant holds the lease until <see cref="IdLeaseResult.ExpiresAtMs"/> (agreed time).</summary>
    Granted = 1,
    Released = 2,

    /// <summary>Another holder has it until <see cref="IdLeaseResult.ExpiresAtMs"/>: its holder id and label are in the result.</summary>
    HeldByOther = 3,

    /// <summary>Not decided on: <see cref="IdLeaseResult.Reason"/> says why (signature, not enrolled, stale, table full).</summary>
    Refused = 4,
}

/// <summary>The agreed answer (kind 0x15): the same bytes from every correct replica.</summary>
/// <remarks>
/// <see cref="SequenceFloor"/>, on a sender's grant: the highest sequence number (or ACKREQ nonce base) the replicas have
/// taken from the id, so a holder whose state folder is new, or behind another holder's, starts above it instead of
/// having its messages dropped as replays.
/// </remarks>
public sealed record IdLeaseResult(LeaseOutcome Outcome, LeaseParty Party, int Id, long ExpiresAtMs, ReadOnlyMemory<byte> Holder, string Label, string Reason,
    long SequenceFloor = 0);

/// <summary>
/// Layouts (little-endian). Request: <c>u8 0x09 | u8 party | u32 id | u8 op | 16 holder | u32 len | label (UTF-8) | i64
/// requestedAtMs</c> (signed, under the tag SIEVEQ/ID-LEASE/v1) <c>| 64 signature</c>. Result: <c>u8 0x15 | u8 outcome |
/// u8 party | u32 id | i64 expiresAtMs | u64 sequenceFloor | 16 holder | u32 len | label | u32 len | reason</c>.
/// </summary>
public static class IdLeaseCodec
{
    public const int HolderBytes = 16;
    public const int MaxLabelBytes = 96;
    public const int MaxReasonBytes = 256;
    public const int MaxRequestBytes = 1 + 1 + 4 + 1 + HolderBytes + 4 + MaxLabelBytes + 8 + EnvelopeLimits.SignatureBytes;
    public const int MaxResultBytes = 1 + 1 + 1 + 4 + 8 + 8 + HolderBytes + 4 + MaxLabelBytes + 4 + MaxReasonBytes;

    private static readonly UTF8Encoding Strict = new(false, throwOnInvalidBytes: true);

    public static byte[] EncodeRequest(LeaseParty party, int id, LeaseOp op, ReadOnlySpan<byte> holder, string label, long requestedAtMs, ECDsa key)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentOutOfRangeException.ThrowIfNegative(id);
        if (holder.Length != HolderBytes)
        {
            throw new ArgumentException($"a holder id is {HolderBytes} bytes", nameof(holder));
        }
        var labelBytes = CheckedText(label, MaxLabelBytes, "label");
        using var w = new CanonicalWriter(MaxRequestBytes);
        w.U8((byte)StructureKind.IdLease);
        w.U8((byte)party);
        w.Id(id);
        w.U8((byte)op);
        w.Raw(holder);
        w.Bytes(labelBytes);
        w.I64(requestedAtMs);
        w.Raw(key.SignData(TaggedHash.Concat(DomainTags.IdLease, w.WrittenSpan), HashAlgorithmName.SHA256));
        return w.ToArray();
    }

    /// <exception cref="MalformedEnvelopeException">Not exactly a lease request.</exception>
    public static IdLeaseRequest DecodeRequest(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.IdLease);
        var party = Party(r.U8("party"));
        var id = r.Id("id");
        var op = r.U8("op") switch
        {
            (byte)LeaseOp.Hold => LeaseOp.Hold,
            (byte)LeaseOp.Release => LeaseOp.Release,
            var b => throw new MalformedEnvelopeException($"id lease: unknown op {b}"),
        };
        r.Take(HolderBytes, "holder");
        var label = Text(r.Bytes(MaxLabelBytes, "label"), "label");
        var at = r.I64("requestedAtMs");
        var signed = bytes.Length - r.Remaining;
        r.Take(EnvelopeLimits.SignatureBytes, "signature");
        r.End("id lease");
        return new IdLeaseRequest(party, id, op, bytes.Slice(7, HolderBytes), label, at, bytes.Slice(signed, EnvelopeLimits.SignatureBytes), bytes[..signed]);
    }

    /// <summary>The bytes the request's signature covers.</summary>
    public static byte[] SignedBytes(IdLeaseRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        return TaggedHash.Concat(DomainTags.IdLease, request.SignedRegion.Span);
    }

    public static byte[] EncodeResult(IdLeaseResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        using var w = new CanonicalWriter(MaxResultBytes);
        w.U8((byte)StructureKind.IdLeaseResult);
        w.U8((byte)result.Outcome);
        w.U8((byte)result.Party);
        w.Id(result.Id);
        w.I64(result.ExpiresAtMs);
        w.Seq(result.SequenceFloor);
        if (result.Holder.Length == HolderBytes)
        {
            w.Raw(result.Holder.Span);
        }
        else
        {
            w.Reserve(HolderBytes).Clear();
        }
        w.Bytes(CheckedText(result.Label, MaxLabelBytes, "label"));
        w.Bytes(Clip(result.Reason, MaxReasonBytes));
        return w.ToArray();
    }

    /// <exception cref="MalformedEnvelopeException">Not exactly a lease result.</exception>
    public static IdLeaseResult DecodeResult(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.IdLeaseResult);
        var outcome = r.U8("outcome") switch
        {
            var b and >= (byte)LeaseOutcome.Granted and <= (byte)LeaseOutcome.Refused => (LeaseOutcome)b,
            var b => throw new MalformedEnvelopeException($"id lease result: unknown outcome {b}"),
        };
        var party = Party(r.U8("party"));
        var id = r.Id("id");
        var expires = r.I64("expiresAtMs");
        var floor = r.Seq("sequenceFloor");
        var holder = r.Take(HolderBytes, "holder").ToArray();
        var label = Text(r.Bytes(MaxLabelBytes, "label"), "label");
        var reason = Text(r.Bytes(MaxReasonBytes, "reason"), "reason");
        r.End("id lease result");
        return new IdLeaseResult(outcome, party, id, expires, holder, label, reason, floor);
    }

    private static LeaseParty Party(byte b) => b switch
    {
        (byte)LeaseParty.Sender => LeaseParty.Sender,
        (byte)LeaseParty.Receiver => LeaseParty.Receiver,
        _ => throw new MalformedEnvelopeException($"id lease: unknown party kind {b}"),
    };

    private static byte[] CheckedText(string text, int max, string what)
    {
        ArgumentNullException.ThrowIfNull(text);
        var bytes = Encoding.UTF8.GetBytes(text);
        if (bytes.Length > max || text.Any(char.IsControl))
        {
            throw new ArgumentException($"a lease {what} is at most {max} bytes of UTF-8 without control characters", what);
        }
        return bytes;
    }

    private static string Text(ReadOnlySpan<byte> bytes, string what)
    {
        string text;
        try
        {
            text = Strict.GetString(bytes);
        }
        catch (DecoderFallbackException e)
        {
            throw new MalformedEnvelopeException($"id lease: the {what} is not UTF-8", e);
        }
        if (text.Any(char.IsControl))
        {
            throw new MalformedEnvelopeException($"id lease: the {what} holds control characters");
        }
        return text;
    }

    /// <summary>A reason cut at a character boundary to fit (reasons are made by the replicas, never refused for length).</summary>
    private static byte[] Clip(string text, int max)
    {
        var clean = new string(text.Select(c => char.IsControl(c) ? ' ' : c).ToArray());
        var bytes = Encoding.UTF8.GetBytes(clean);
        if (bytes.Length <= max)
        {
            return bytes;
        }
        var cut = max;
        while (cut > 0 && (bytes[cut] & 0xC0) == 0x80)
        {
            cut--;
        }
        return bytes[..cut];
    }
}
