namespace SieveQ.Policy;

/// <summary>Turns a snapshot into a policy that is valid as a whole, or into nothing.</summary>
public static class PolicyLoader
{
    public static PolicyEvaluation Evaluate(PolicySnapshot snapshot)
    {
        ArgumentNullException.ThrowIfNull(snapshot);
        if (snapshot.Root is null)
        {
            return new PolicyEvaluation(snapshot.Source, snapshot.Fingerprint, null, [snapshot.Error ?? "the policy could not be read"], []);
        }
        var errors = new List<string>();
        var warnings = new List<string>();
        var policy = PolicyLayout.Read(snapshot.Root, errors, warnings);
        // Values of the wrong kind were replaced by valid defaults while reading, so validating what was read
        // adds only the other problems: the operator gets the whole list from one attempt.
        errors.AddRange(policy.Validate());
        return new PolicyEvaluation(snapshot.Source, snapshot.Fingerprint, errors.Count == 0 ? policy : null, [.. errors], [.. warnings]);
    }
}
