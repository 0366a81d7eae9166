using SieveQ.Rules;
using SieveQ.Rules.Signing;

namespace SieveQ.Controller.RuleSets;

/// <summary>Why an uploaded rule set was refused, in words the operator can act on.</summary>
public sealed class RuleSetCheckException(string message, Exception? inner = null) : Exception(message, inner);

/// <summary>
/// The controller's acceptance of an uploaded rule set, before anything is ordered: size, then the replicas' own path
/// (<see cref="RuleSetLoader"/>: JSON, canonical form, signature when there is one, schema, references, compilation).
/// </summary>
public static class RuleSetCheck
{
    /// <summary>A rule set through the management API; the largest sample set is a few dozen KiB, so this is room, not a target.</summary>
    public const int MaxDocumentBytes = 256 * 1024;

    /// <param name="pinned">The administrator key a sidecar must name (null when the controller holds none: integrity only).</param>
    /// <param name="requireSigned">Refuse a document without a sidecar (controller.json requireSignedRuleSets).</param>
    public static CompiledRuleSet Check(ReadOnlyMemory<byte> json, ReadOnlySpan<byte> sidecar, SignerKey? pinned, bool requireSigned)
    {
        if (json.Length == 0)
        {
            throw new RuleSetCheckException("the rule set is empty");
        }
        if (json.Length > MaxDocumentBytes)
        {
            throw new RuleSetCheckException($"the rule set is {json.Length} bytes; the management API takes at most {MaxDocumentBytes}");
        }
        if (sidecar.Length > SignatureSidecar.MaxBytes)
        {
            throw new RuleSetCheckException($"the signature file is {sidecar.Length} bytes; the limit is {SignatureSidecar.MaxBytes}");
        }
        if (sidecar.IsEmpty && requireSigned)
        {
            throw new RuleSetCheckException("unsigned: this controller requires a rule set signed by the administrator key (controller.json requireSignedRuleSets); send its .sig file with it");
        }
        try
        {
            return sidecar.IsEmpty ? RuleSetLoader.CompileUnsigned(json) : RuleSetLoader.Load(json, sidecar, pinned).Compiled;
        }
        catch (RuleSetException e)
        {
            throw new RuleSetCheckException(e.Message, e);
        }
    }
}
