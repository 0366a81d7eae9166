using System.Security.Cryptography;

namespace SieveQ.Sieve.Envelope;

public enum RuleSetOp : byte
{
    Activate = 1,
    Rollback = 2,

    /// <summary>
    /// Activate a document on the authority of its own administrator signature, with no command signature:
    /// what an agent carries when Group Policy points it at a published rule set. Anyone may replay it, which
    /// is harmless because the replicas take it only when its version is above every version ever run, and
    /// it leaves the nonce and the version kept for rollback to the administrator's own commands.
    /// </summary>
    Publish = 3,
}

/// <summary>
/// An administrator's order to switch the replicas' rule set: activate a new signed document, or roll
/// back to the version kept before the running one. It is self-authenticated by the pinned
/// administrator key (ECDSA P-256), so any ordering client may submit it: pre-SQs are not trusted
/// with it, only trusted to carry it. <see cref="FromVersion"/> names the version the administrator
/// saw running, and <see cref="Nonce"/> must exceed every nonce applied before; together they make a
/// captured command useless once anything changed.
/// </summary>
public sealed record RuleSetCommand(
    RuleSetOp Op,
    int FromVersion,
    int ToVersion,
    long Nonce,
    ReadOnlyMemory<byte> Document,
    ReadOnlyMemory<byte> DocumentSignature,
    ReadOnlyMemory<byte> SignedRegion,
    ReadOnlyMemory<byte> Signature);

/// <summary>
/// Layout: <c>u8 kind=0x05 | u8 op (1 activate, 2 rollback, 3 publish) | u32 fromVersion | u32 toVersion |
/// u64 nonce</c>, for activate and publish also <c>u32 len | document (JSON) | u32 len | signature file (JSON)</c>,
/// then, except for publish, <c>64 signature</c>: ECDSA P-256 / SHA-256, IEEE P1363, by the administrator key over
/// <c>"SIEVEQ/RULESET-COMMAND/v1" || everything before it</c>. A publish has fromVersion and nonce 0: nothing
/// signs them, so they may not pretend to say anything. The document is capped at
/// <see cref="EnvelopeLimits.MaxRuleSetDocumentBytes"/>, the signature file at
/// <see cref="EnvelopeLimits.MaxRuleSetSignatureFileBytes"/>.
/// </summary>
public static class RuleSetCommandCodec
{
    private const int HeaderBytes = 1 + 1 + 4 + 4 + 8;

    /// <summary>The signed region of a command; sign it with <see cref="Sign"/>.</summary>
    public static byte[] EncodeRegion(RuleSetOp op, int fromVersion, int toVersion, long nonce, ReadOnlySpan<byte> document, ReadOnlySpan<byte> documentSignature)
    {
        CheckFields(op, fromVersion, toVersion, nonce, document.Length, documentSignature.Length, arguments: true);
        using var w = new CanonicalWriter(HeaderBytes + 8 + document.Length + documentSignature.Length);
        w.U8((byte)StructureKind.RuleSetCommand);
        w.U8((byte)op);
        w.Id(fromVersion);
        w.Id(toVersion);
        w.Seq(nonce);
        if (op != RuleSetOp.Rollback)
        {
            w.Bytes(document);
            w.Bytes(documentSignature);
        }
        return w.ToArray();
    }

    /// <summary>A complete publish command: the document and its signature file, authorised by that signature alone.</summary>
    public static byte[] EncodePublish(int version, ReadOnlySpan<byte> document, ReadOnlySpan<byte> documentSignature) =>
        EncodeRegion(RuleSetOp.Publish, 0, version, 0, document, documentSignature);

    /// <summary>The region followed by the administrator's signature over the tagged region.</summary>
    public static byte[] Sign(ReadOnlySpan<byte> region, ECDsa adminKey)
    {
        ArgumentNullException.ThrowIfNull(adminKey);
        var signature = adminKey.SignData(TaggedHash.Concat(DomainTags.RuleSetCommand, region), HashAlgorithmName.SHA256,
            DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        return [.. region, .. signature];
    }

    /// <summary>Structure only (cheap): the signature is checked by whoever holds the pinned key.</summary>
    public static RuleSetCommand Decode(ReadOnlyMemory<byte> bytes)
    {
        const int limit = EnvelopeLimits.MaxRuleSetCommandBytes;
        if (bytes.Length > limit)
        {
            throw new MalformedEnvelopeException($"rule-set command of {bytes.Length} bytes above the limit of {limit} (documents up to {EnvelopeLimits.MaxRuleSetDocumentBytes} bytes)");
        }
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.RuleSetCommand);
        var opByte = r.U8("op");
        if (opByte is not ((byte)RuleSetOp.Activate or (byte)RuleSetOp.Rollback or (byte)RuleSetOp.Publish))
        {
            throw new MalformedEnvelopeException($"rule-set command: op {opByte} is not 1 (activate), 2 (rollback) or 3 (publish)");
        }
        var op = (RuleSetOp)opByte;
        var from = r.Id("fromVersion");
        var to = r.Id("toVersion");
        var nonce = r.Seq("nonce");
        ReadOnlyMemory<byte> document = default;
        ReadOnlyMemory<byte> documentSignature = default;
        if (op != RuleSetOp.Rollback)
        {
            var docLength = (int)Math.Min(r.U32("document length"), int.MaxValue);
            if (docLength > EnvelopeLimits.MaxRuleSetDocumentBytes)
            {
                throw new MalformedEnvelopeException($"rule-set document of {docLength} bytes above the limit of {EnvelopeLimits.MaxRuleSetDocumentBytes}");
            }
            var at = r.Position;
            r.Take(docLength, "document");
            document = bytes.Slice(at, docLength);
            var sigLength = r.Count(EnvelopeLimits.MaxRuleSetSignatureFileBytes, "signature file length");
            at = r.Position;
            r.Take(sigLength, "signature file");
            documentSignature = bytes.Slice(at, sigLength);
        }
        var region = r.Position;
        var signatureBytes = op == RuleSetOp.Publish ? 0 : EnvelopeLimits.SignatureBytes;
        r.Take(signatureBytes, "signature");
        r.End("rule-set command");
        CheckFields(op, from, to, nonce, document.Length, documentSignature.Length, arguments: false);
        return new RuleSetCommand(op, from, to, nonce, document, documentSignature, bytes[..region], bytes.Slice(region, signatureBytes));
    }

    /// <summary>The bytes the administrator signature covers.</summary>
    public static byte[] SignedBytes(RuleSetCommand command)
    {
        ArgumentNullException.ThrowIfNull(command);
        return TaggedHash.Concat(DomainTags.RuleSetCommand, command.SignedRegion.Span);
    }

    private static void CheckFields(RuleSetOp op, int from, int to, long nonce, int documentBytes, int signatureBytes, bool arguments)
    {
        string? problem = null;
        var carriesDocument = op is RuleSetOp.Activate or RuleSetOp.Publish;
        if (op is not (RuleSetOp.Activate or RuleSetOp.Rollback or RuleSetOp.Publish))
        {
            problem = $"op {(byte)op} is not activate, rollback or publish";
        }
        else if (op == RuleSetOp.Publish && (from != 0 || nonce != 0))
        {
            problem = "a publish carries no signed fromVersion or nonce: both must be 0";
        }
        else if (to < 1 || (op != RuleSetOp.Publish && from < 1))
        {
            problem = "versions start at 1";
        }
        else if (op != RuleSetOp.Publish && nonce < 1)
        {
            problem = "the nonce must be positive";
        }
        else if (op == RuleSetOp.Activate && to <= from)
        {
            problem = $"activation must raise the version ({from} -> {to})";
        }
        else if (op == RuleSetOp.Rollback && to == from)
        {
            problem = $"rollback must change the version ({from} -> {to})";
        }
        else if (carriesDocument && (documentBytes is < 1 or > EnvelopeLimits.MaxRuleSetDocumentBytes))
        {
            problem = $"rule-set document of {documentBytes} bytes: it must be 1 to {EnvelopeLimits.MaxRuleSetDocumentBytes} bytes";
        }
        else if (carriesDocument && (signatureBytes is < 1 or > EnvelopeLimits.MaxRuleSetSignatureFileBytes))
        {
            problem = $"signature file of {signatureBytes} bytes: it must be 1 to {EnvelopeLimits.MaxRuleSetSignatureFileBytes} bytes";
        }
        if (problem is null)
        {
            return;
        }
        throw arguments ? new ArgumentException("rule-set command: " + problem) : new MalformedEnvelopeException("rule-set command: " + problem);
    }
}
