using System.Security.Cryptography;

namespace SieveQ.Sieve.Envelope;

/// <summary>What an administrator command does; values are part of the wire format and never reused.</summary>
public enum AdminOp : byte
{
    QuarantineSender = 1,
    ReadmitSender = 2,
    QuarantinePreSq = 3,
    ReadmitPreSq = 4,

    /// <summary>Enrol a new sender (its keys and proof of possession travel in the command); applied without restart.</summary>
    EnrolSender = 5,

    /// <summary>Revoke a sender for good: its id is never enrolled again, its traffic is refused, its held state released.</summary>
    RevokeSender = 6,

    /// <summary>Allow a sender to send to a receiver, up to a size (new route or new limit); fixed-route deployments only.</summary>
    AllowRoute = 7,

    /// <summary>Take a route away; fixed-route deployments only.</summary>
    RemoveRoute = 8,

    /// <summary>Enrol a new receiver (its keys and proof of possession travel in the command); applied without restart.</summary>
    EnrolReceiver = 9,

    /// <summary>Revoke a receiver for good: its id is never enrolled again, nothing more is queued for it, its queue is let go.</summary>
    RevokeReceiver = 10,
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
    public bool TargetsSender => Op is AdminOp.QuarantineSender or AdminOp.ReadmitSender or AdminOp.EnrolSender or AdminOp.RevokeSender or AdminOp.AllowRoute or AdminOp.RemoveRoute;

    public bool Quarantines => Op is AdminOp.QuarantineSender or AdminOp.QuarantinePreSq;

    public bool TargetsReceiver => Op is AdminOp.EnrolReceiver or AdminOp.RevokeReceiver;

    /// <summary>Enrolment and revocation change who may send or receive; they are signed under their own domain.</summary>
    public bool ChangesEnrolment => Op is AdminOp.EnrolSender or AdminOp.RevokeSender or AdminOp.EnrolReceiver or AdminOp.RevokeReceiver;

    /// <summary>Route changes say where a sender may send; they are signed under their own domain too.</summary>
    public bool ChangesRoutes => Op is AdminOp.AllowRoute or AdminOp.RemoveRoute;

    /// <summary>The route's receiver (<see cref="AdminOp.AllowRoute"/> and <see cref="AdminOp.RemoveRoute"/>).</summary>
    public int RouteReceiver { get; init; }

    /// <summary>The largest DATA the route admits, in bytes (<see cref="AdminOp.AllowRoute"/>).</summary>
    public int RouteMaxBytes { get; init; }

    /// <summary>The new party's name, keys and proof (<see cref="AdminOp.EnrolSender"/> and <see cref="AdminOp.EnrolReceiver"/> only).</summary>
    public PartyEnrolmentClaim? Claim { get; init; }

    /// <summary>With an enrolment, this target asks the replicas for the next free id (above every sender and receiver id).</summary>
    public const int NextFreeId = 0;
}

/// <summary>
/// Layout: <c>u8 kind=0x06 | u8 op | u32 target | u64 nonce | 64 signature</c>, the signature ECDSA P-256 / SHA-256
/// (IEEE P1363) by the administrator key over <c>"SIEVEQ/ADMIN-COMMAND/v1" || everything before it</c>. Ops:
/// 1 quarantine sender, 2 readmit sender, 3 quarantine pre-SQ, 4 readmit pre-SQ. The nonce is at least 1.
/// Ops 5 (enrol sender) and 6 (revoke sender) are signed over <c>"SIEVEQ/ADMIN-ENROLMENT/v1" || everything before
/// the signature</c> instead; op 5 carries, between the nonce and the signature, <c>u32 len | name (UTF-8) | u32 len |
/// signature SPKI | u32 len | agreement SPKI | 64 proof</c> (<see cref="EnrolmentProof"/>), and its target 0 asks for
/// the next free sender id. Ops 7 (allow route) and 8 (remove route) target the sender, carry <c>u32 receiver</c>
/// (op 7 also <c>u32 max DATA bytes</c>, at most <see cref="EnvelopeLimits.MaxDataBytes"/>) between the nonce and the
/// signature, and are signed over <c>"SIEVEQ/ADMIN-ROUTE/v1" || everything before the signature</c>. Ops 9 (enrol
/// receiver) and 10 (revoke receiver) are ops 5 and 6 for receivers: the same layouts, the same domain.
/// </summary>
public static class AdminCommandCodec
{
    /// <summary>Bytes of a whole command of ops 1 to 4 and 6.</summary>
    public const int Length = RegionLength + EnvelopeLimits.SignatureBytes;

    /// <summary>Bytes of the largest command (an enrolment with the longest name and keys).</summary>
    public const int MaxLength = Length + 12 + EnrolmentProof.MaxNameBytes + (2 * EnrolmentProof.MaxKeyBytes) + EnvelopeLimits.SignatureBytes;

    private const int RegionLength = 1 + 1 + 4 + 8;

    /// <summary>Bytes of the longest route change (op 7) before its signature.</summary>
    private const int RouteLength = RegionLength + 4 + 4;

    /// <summary>A complete sender enrolment signed by <paramref name="administrator"/>; <paramref name="sender"/> 0 asks for the next free id.</summary>
    public static byte[] SignEnrolment(int sender, long nonce, PartyEnrolmentClaim claim, ECDsa administrator) =>
        SignEnrolment(AdminOp.EnrolSender, sender, nonce, claim, administrator);

    /// <summary>A complete enrolment (<see cref="AdminOp.EnrolSender"/> or <see cref="AdminOp.EnrolReceiver"/>) signed by <paramref name="administrator"/>; <paramref name="id"/> 0 asks for the next free id.</summary>
    public static byte[] SignEnrolment(AdminOp op, int id, long nonce, PartyEnrolmentClaim claim, ECDsa administrator)
    {
        if (op is not (AdminOp.EnrolSender or AdminOp.EnrolReceiver))
        {
            throw new ArgumentException($"administrator command: op {(byte)op} is not an enrolment", nameof(op));
        }
        ArgumentNullException.ThrowIfNull(claim);
        ArgumentNullException.ThrowIfNull(administrator);
        ArgumentOutOfRangeException.ThrowIfNegative(id);
        ArgumentOutOfRangeException.ThrowIfLessThan(nonce, 1);
        if (EnrolmentProof.NameProblem(claim.Name) is { } problem)
        {
            throw new ArgumentException(problem, nameof(claim));
        }
        if (claim.SignaturePublicKey.Length is < 1 or > EnrolmentProof.MaxKeyBytes || claim.AgreementPublicKey.Length is < 1 or > EnrolmentProof.MaxKeyBytes
            || claim.Proof.Length != EnvelopeLimits.SignatureBytes)
        {
            throw new ArgumentException($"enrolment: keys of 1 to {EnrolmentProof.MaxKeyBytes} bytes and a {EnvelopeLimits.SignatureBytes}-byte proof", nameof(claim));
        }
        using var w = new CanonicalWriter(MaxLength);
        w.U8((byte)StructureKind.AdminCommand);
        w.U8((byte)op);
        w.Id(id);
        w.Seq(nonce);
        w.Bytes(System.Text.Encoding.UTF8.GetBytes(claim.Name));
        w.Bytes(claim.SignaturePublicKey.Span);
        w.Bytes(claim.AgreementPublicKey.Span);
        w.Raw(claim.Proof.Span);
        var region = w.ToArray();
        var signature = administrator.SignData(TaggedHash.Concat(DomainTags.AdminEnrolment, region), HashAlgorithmName.SHA256,
            DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        return [.. region, .. signature];
    }

    /// <summary>A complete route change signed by <paramref name="administrator"/>; <paramref name="maxBytes"/> only with <see cref="AdminOp.AllowRoute"/>.</summary>
    public static byte[] SignRoute(AdminOp op, int sender, int receiver, int maxBytes, long nonce, ECDsa administrator)
    {
        ArgumentNullException.ThrowIfNull(administrator);
        if (op is not (AdminOp.AllowRoute or AdminOp.RemoveRoute))
        {
            throw new ArgumentException($"administrator command: op {(byte)op} is not a route change", nameof(op));
        }
        ArgumentOutOfRangeException.ThrowIfNegative(sender);
        ArgumentOutOfRangeException.ThrowIfNegative(receiver);
        ArgumentOutOfRangeException.ThrowIfLessThan(nonce, 1);
        if (op == AdminOp.AllowRoute)
        {
            ArgumentOutOfRangeException.ThrowIfNegative(maxBytes);
            ArgumentOutOfRangeException.ThrowIfGreaterThan(maxBytes, EnvelopeLimits.MaxDataBytes);
        }
        using var w = new CanonicalWriter(RouteLength);
        w.U8((byte)StructureKind.AdminCommand);
        w.U8((byte)op);
        w.Id(sender);
        w.Seq(nonce);
        w.Id(receiver);
        if (op == AdminOp.AllowRoute)
        {
            w.Id(maxBytes);
        }
        var region = w.ToArray();
        var signature = administrator.SignData(TaggedHash.Concat(DomainTags.AdminRoute, region), HashAlgorithmName.SHA256,
            DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        return [.. region, .. signature];
    }

    /// <summary>A complete command signed by <paramref name="administrator"/>.</summary>
    public static byte[] Sign(AdminOp op, int target, long nonce, ECDsa administrator)
    {
        ArgumentNullException.ThrowIfNull(administrator);
        if (!Enum.IsDefined(op) || op is AdminOp.EnrolSender or AdminOp.EnrolReceiver or AdminOp.AllowRoute or AdminOp.RemoveRoute)
        {
            throw new ArgumentException($"administrator command: op {(byte)op} is not defined here (an enrolment is made with SignEnrolment, a route change with SignRoute)", nameof(op));
        }
        ArgumentOutOfRangeException.ThrowIfNegative(target);
        ArgumentOutOfRangeException.ThrowIfLessThan(nonce, 1);
        using var w = new CanonicalWriter(Length);
        w.U8((byte)StructureKind.AdminCommand);
        w.U8((byte)op);
        w.Id(target);
        w.Seq(nonce);
        var region = w.ToArray();
        var signature = administrator.SignData(TaggedHash.Concat(Domain(op), region), HashAlgorithmName.SHA256,
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
            throw new MalformedEnvelopeException($"administrator command: op {opByte} is not 1 to 10 (quarantine/readmit sender, quarantine/readmit pre-SQ, enrol/revoke sender, allow/remove route, enrol/revoke receiver)");
        }
        var op = (AdminOp)opByte;
        var target = r.Id("target");
        var nonce = r.Seq("nonce");
        if (nonce < 1)
        {
            throw new MalformedEnvelopeException("administrator command: the nonce must be positive");
        }
        PartyEnrolmentClaim? claim = null;
        if (op is AdminOp.EnrolSender or AdminOp.EnrolReceiver)
        {
            var nameBytes = r.Bytes(EnrolmentProof.MaxNameBytes, "party name");
            string name;
            try
            {
                name = new System.Text.UTF8Encoding(false, throwOnInvalidBytes: true).GetString(nameBytes);
            }
            catch (System.Text.DecoderFallbackException e)
            {
                throw new MalformedEnvelopeException("administrator command: the party name is not UTF-8", e);
            }
            var signingLength = r.Count(EnrolmentProof.MaxKeyBytes, "signature public key length");
            var signingAt = r.Position;
            r.Take(signingLength, "signature public key");
            var agreementLength = r.Count(EnrolmentProof.MaxKeyBytes, "agreement public key length");
            var agreementAt = r.Position;
            r.Take(agreementLength, "agreement public key");
            var proofAt = r.Position;
            r.Take(EnvelopeLimits.SignatureBytes, "proof of possession");
            claim = new PartyEnrolmentClaim(name, bytes.Slice(signingAt, signingLength), bytes.Slice(agreementAt, agreementLength),
                bytes.Slice(proofAt, EnvelopeLimits.SignatureBytes));
        }
        int routeReceiver = 0, routeMaxBytes = 0;
        if (op is AdminOp.AllowRoute or AdminOp.RemoveRoute)
        {
            routeReceiver = r.Id("route receiver");
            if (op == AdminOp.AllowRoute)
            {
                routeMaxBytes = r.Id("route size limit");
                if (routeMaxBytes > EnvelopeLimits.MaxDataBytes)
                {
                    throw new MalformedEnvelopeException($"administrator command: a route's size limit is at most {EnvelopeLimits.MaxDataBytes} bytes of DATA (got {routeMaxBytes})");
                }
            }
        }
        var region = r.Position;
        r.Take(EnvelopeLimits.SignatureBytes, "signature");
        r.End("administrator command");
        return new AdminCommand(op, target, nonce, bytes[..region], bytes.Slice(region, EnvelopeLimits.SignatureBytes))
        {
            Claim = claim,
            RouteReceiver = routeReceiver,
            RouteMaxBytes = routeMaxBytes,
        };
    }

    /// <summary>The bytes the administrator signature covers.</summary>
    public static byte[] SignedBytes(AdminCommand command)
    {
        ArgumentNullException.ThrowIfNull(command);
        return TaggedHash.Concat(Domain(command.Op), command.SignedRegion.Span);
    }

    /// <summary>Changes of who may send are signed under their own purpose, so no quarantine signature can ever pass for one.</summary>
    private static byte[] Domain(AdminOp op) => op switch
    {
        AdminOp.EnrolSender or AdminOp.RevokeSender or AdminOp.EnrolReceiver or AdminOp.RevokeReceiver => DomainTags.AdminEnrolment,
        AdminOp.AllowRoute or AdminOp.RemoveRoute => DomainTags.AdminRoute,
        _ => DomainTags.AdminCommand,
    };

    /// <summary>How the op reads in results, logs and the audit trail.</summary>
    public static string Describe(AdminOp op, int target) => op switch
    {
        AdminOp.QuarantineSender => $"quarantine sender {target}",
        AdminOp.ReadmitSender => $"readmit sender {target}",
        AdminOp.QuarantinePreSq => $"quarantine pre-SQ {target}",
        AdminOp.ReadmitPreSq => $"readmit pre-SQ {target}",
        AdminOp.EnrolSender => target == AdminCommand.NextFreeId ? "enrol a sender under the next free id" : $"enrol sender {target}",
        AdminOp.RevokeSender => $"revoke sender {target}",
        AdminOp.AllowRoute => $"allow a route from sender {target}",
        AdminOp.RemoveRoute => $"remove a route from sender {target}",
        AdminOp.EnrolReceiver => target == AdminCommand.NextFreeId ? "enrol a receiver under the next free id" : $"enrol receiver {target}",
        AdminOp.RevokeReceiver => $"revoke receiver {target}",
        _ => $"op {(byte)op} on {target}",
    };
}
