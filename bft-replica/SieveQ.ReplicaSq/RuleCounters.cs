using SieveQ.Protocol.V1;
using SieveQ.Rules.Activation;

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

    public static void Add(IDictionary<string, long> counters, GuardedSieveApplication application)
    {
        var (active, previous, nonce, applied, refused, denials, prescans) = application.Read(a =>
        {
            var ordered = a.Rules as OrderedRuleSets;
            return (a.ActiveRuleSetVersion, ordered?.Store.Previous?.Version, ordered?.LastNonce,
                a.RuleSetCommandsApplied, a.RuleSetCommandsRefused, a.RuleDenials.Snapshot(), ordered?.Store.Current.Prescans);
        });
        if (prescans is { } p)
        {
            // The running version's payload scans: ahead of execution, taken by it, or done on the execution thread.
            counters["rules.prescan.prescanned"] = p.Prescanned;
            counters["rules.prescan.found"] = p.Found;
            counters["rules.prescan.scanned_inline"] = p.ScannedInline;
        }
        if (active is { } v)
        {
            counters[ActiveVersion] = v;
            counters[PreviousVersion] = previous ?? 0;
            counters[LastNonce] = nonce ?? 0;
        }
        counters["rules.commands_applied"] = applied;
        counters["rules.commands_refused"] = refused;
        foreach (var (rule, count) in denials)
        {
            counters[$"deny.rule.{rule}"] = count;
        }
    }
}
