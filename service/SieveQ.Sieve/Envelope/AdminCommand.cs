using System.Security.Cryptography;

namespace SieveQ.Sieve.Envelope;

/// <summary>What an administrator command does; values are part of the wire format and never reused.</summary>
public enum AdminOp : byte
{
    QuarantineSender = 1,
    ReadmitSender = 2,
    QuarantinePreSq = 3,
    ReadmitPreSq = 4,
}

/// <summary>
/// An administrator's order to the replicas about one party: quarantine it (its traffic is refused untaken until
/// readmitted, whatever its suspicion counter says) or readmit it (the quarantine ends and its suspicion is cleared).
/// Self-authenticated by the administrator key the deployment pins, like <see cref="RuleSetCommand"/>, so any
/// ordering client may carry it. <see cref="Nonce"/> must exceed every administrator-command nonce applied before
/// (agreed state), so a captured command is useless once it has been applied or overtaken.
/// </summary>
public sealed record AdminCommand(AdminOp Op, int Target, long Nonce, ReadOnlyMemory<byte> SignedRegion, ReadOnlyMemory<byte> Signature)
{
    public bool TargetsSender => Op is AdminOp.QuarantineSender or AdminOp.ReadmitSender;

    public bool Quarantines => Op is AdminOp.QuarantineSender or AdminOp.QuarantinePreSq;
}

/// <summary>
/// Layout: <c>u8 kind=0x06 | u8 op | u32 target | u64 nonce | 64 signature</c>, the signature ECDSA P-256 / SHA-256
/// (IEEE P1363) by the administrator key over <c>"SIEVEQ/ADMIN-COMMAND/v1" || everything before it</c>. Ops:
/// 1 quarantine sender, 2 readmit sender, 3 quarantine pre-SQ, 4 readmit pre-SQ. The nonce is at least 1.
/// </summary>
public static class AdminCommandCodec
{
    /// <summary>Bytes of a whole command.</summary>
    public const int Length = RegionLength + EnvelopeLimits.SignatureBytes;

    private const int RegionLength = 1 + 1 + 4 + 8;

    /// <summary>A complete command signed by <paramref name="administrator"/>.</summary>
    public static byte[] Sign(AdminOp op, int target, long nonce, ECDsa administrator)
    {
        ArgumentNullException.ThrowIfNull(administrator);
        if (!Enum.IsDefined(op))
        {
            throw new ArgumentException($"administrator command: op {(byte)op} is not defined", nameof(op));
        }
        ArgumentOutOfRangeException.ThrowIfNegative(target);
        ArgumentOutOfRangeException.ThrowIfLessThan(nonce, 1);
        using var w = new CanonicalWriter(Length);
        w.U8((byte)StructureKind.AdminCommand);
        w.U8((byte)op);
        w.Id(target);
        w.Seq(nonce);
        var region = w.ToArray();
        var signature = administrator.SignData(TaggedHash.Concat(DomainTags.AdminCommand, region), HashAlgorithmName.SHA256,
            DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        return [.. region, .. signature];
    }

    /// <summary>Structure only: the signature is checked by whoever holds the pinned key (<see cref="SignedBytes"/>).</summary>
    public static AdminCommand Decode(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.AdminCommand);
        var opByte = r.U8("op");
        if (!Enum.IsDefined((AdminOp)opByte))
        {
            throw new MalformedEnvelopeException($"administrator command: op {opByte} is not 1 to 4 (quarantine/readmit sender, quarantine/readmit pre-SQ)");
        }
        var target = r.Id("target");
        var nonce = r.Seq("nonce");
        if (nonce < 1)
        {
            throw new MalformedEnvelopeException("administrator command: the nonce must be positive");
        }
        r.Take(EnvelopeLimits.SignatureBytes, "signature");
        r.End("administrator command");
        return new AdminCommand((AdminOp)opByte, target, nonce, bytes[..RegionLength], bytes.Slice(RegionLength, EnvelopeLimits.SignatureBytes));
    }

    /// <summary>The bytes the administrator signature covers.</summary>
    public static byte[] SignedBytes(AdminCommand command)
    {
        ArgumentNullException.ThrowIfNull(command);
        return TaggedHash.Concat(DomainTags.AdminCommand, command.SignedRegion.Span);
    }

    /// <summary>How the op reads in results, logs and the audit trail.</summary>
    public static string Describe(AdminOp op, int target) => op switch
    {
        AdminOp.QuarantineSender => $"quarantine sender {target}",
        AdminOp.ReadmitSender => $"readmit sender {target}",
        AdminOp.QuarantinePreSq => $"quarantine pre-SQ {target}",
        AdminOp.ReadmitPreSq => $"readmit pre-SQ {target}",
        _ => $"op {(byte)op} on {target}",
    };
}
