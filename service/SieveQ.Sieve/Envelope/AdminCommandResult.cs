using System.Text;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// What the replicas agree to answer to an ordering request that carried an administrator command: whether it was
/// applied, the highest administrator-command nonce applied afterwards (so a submitter whose clock is behind can
/// retry above it), and a reason. The submitter takes it once f+1 replicas return the same bytes, so everything in
/// it is a pure function of the command and the agreed state.
/// </summary>
public sealed record AdminCommandResult(bool Applied, long LastNonce, string Reason);

/// <summary>Layout: <c>u8 kind=0x13 | u8 applied (0/1) | u64 lastNonce | u32 len | reason (UTF-8, at most 1,024 bytes)</c>.</summary>
public static class AdminCommandResultCodec
{
    public static byte[] Encode(AdminCommandResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var reason = Encoding.UTF8.GetBytes(result.Reason ?? "");
        if (reason.Length > EnvelopeLimits.MaxReasonBytes)
        {
            throw new ArgumentException($"administrator command result: reason above {EnvelopeLimits.MaxReasonBytes} bytes", nameof(result));
        }
        using var w = new CanonicalWriter(1 + 1 + 8 + 4 + reason.Length);
        w.U8((byte)StructureKind.AdminCommandResult);
        w.Bool(result.Applied);
        w.Seq(result.LastNonce);
        w.Bytes(reason);
        return w.ToArray();
    }

    public static AdminCommandResult Decode(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.AdminCommandResult);
        var applied = r.Bool("applied");
        var last = r.Seq("lastNonce");
        var reasonBytes = r.Bytes(EnvelopeLimits.MaxReasonBytes, "reason");
        r.End("administrator command result");
        try
        {
            return new AdminCommandResult(applied, last, new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(reasonBytes));
        }
        catch (DecoderFallbackException e)
        {
            throw new MalformedEnvelopeException("administrator command result: reason is not UTF-8", e);
        }
    }
}
