using System.Collections.Immutable;

namespace SieveQ.Policy;

/// <summary>The verdict on one snapshot: a policy that may be applied, or the reasons it may not.</summary>
public sealed record PolicyEvaluation(
    string Source,
    string Fingerprint,
    AgentPolicy? Policy,
    ImmutableArray<string> Errors,
    ImmutableArray<string> Warnings)
{
    public bool IsValid => Policy is not null && Errors.IsEmpty;
}
