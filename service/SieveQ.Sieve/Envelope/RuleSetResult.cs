using System.Text;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// What the replicas agree to answer to an ordering request that carried a rule-set command: whether
/// it was applied, the version running afterwards, and the rule-evaluation number from which that
/// version decides (every replica switches there), with a reason an administrator can act on. The
/// submitter takes it once f+1 replicas return the same bytes, so the reason must be a pure function
/// of the command and the agreed state.
/// </summary>
public sealed record RuleSetResult(bool Applied, int ActiveVersion, long FromEvaluation, string Reason);

/// <summary>Layout: <c>u8 kind=0x12 | u8 applied (0/1) | u32 activeVersion | u64 fromEvaluation | u32 len | reason (UTF-8, at most 1,024 bytes)</c>.</summary>
public static class RuleSetResultCodec
{
    public static byte[] Encode(RuleSetResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var reason = Truncate(result.Reason);
        using var w = new CanonicalWriter(1 + 1 + 4 + 8 + 4 + reason.Length);
        w.U8((byte)StructureKind.RuleSetResult);
        w.Bool(result.Applied);
        w.Id(result.ActiveVersion);
        w.Seq(result.FromEvaluation);
        w.Bytes(reason);
        return w.ToArray();
    }

    public static RuleSetResult Decode(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.RuleSetResult);
        var applied = r.Bool("applied");
        var version = r.Id("activeVersion");
        var from = r.Seq("fromEvaluation");
        var reasonBytes = r.Bytes(EnvelopeLimits.MaxReasonBytes, "reason");
        r.End("rule-set result");
        string reason;
        try
        {
            reason = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(reasonBytes);
        }
        catch (DecoderFallbackException e)
        {
            throw new MalformedEnvelopeException("rule-set result: reason is not UTF-8", e);
        }
        return new RuleSetResult(applied, version, from, reason);
    }

    /// <summary>Cuts at a character boundary so the bytes stay valid UTF-8.</summary>
    private static byte[] Truncate(string reason)
    {
        var bytes = Encoding.UTF8.GetBytes(reason ?? "");
        if (bytes.Length <= EnvelopeLimits.MaxReasonBytes)
        {
            return bytes;
        }
        var end = EnvelopeLimits.MaxReasonBytes;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80)
        {
            end--;
        }
        return bytes[..end];
    }
}
