using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// The rules' part of the health reply: the running and kept versions and the last applied command
/// nonce (what `sieveq rules push` and `rollback` build their commands against), command outcomes, and
/// denials by deciding rule (bounded by <see cref="Sieve.Filtering.RuleDenialCounters.MaxRules"/>).
/// </summary>
internal static class RuleCounters
{
    public const string ActiveVersion = "rules.active_version";
    public const string PreviousVersion = "rules.previous_version";
    public const string LastNonce = "rules.last_nonce";

    public static void Add(IDictionary<string, long> counters, SieveReadModel sieve)
    {
        var standing = sieve.RuleSets;
        if (standing?.Prescans?.Invoke() is { } p)
        {
            // The running version's payload scans: ahead of execution, taken by it, or done on the execution thread.
            counters["rules.prescan.prescanned"] = p.Prescanned;
            counters["rules.prescan.found"] = p.Found;
            counters["rules.prescan.scanned_inline"] = p.ScannedInline;
        }
        if (standing is not null)
        {
            counters[ActiveVersion] = standing.ActiveVersion;
            counters[PreviousVersion] = standing.PreviousVersion ?? 0;
            counters[LastNonce] = standing.LastNonce;
        }
        counters["rules.commands_applied"] = sieve.RuleSetCommandsApplied;
        counters["rules.commands_refused"] = sieve.RuleSetCommandsRefused;
        foreach (var (rule, count) in sieve.RuleDenials?.Snapshot() ?? [])
        {
            counters[$"deny.rule.{rule}"] = count;
        }
    }
}
