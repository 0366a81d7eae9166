using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace SieveQ.Sieve.Filtering;

/// <summary>
/// Denials by the rule that decided them (the part of <c>RuleVerdict.Reason</c> before the first
/// colon), for health counters and the <c>sieveq.rules.denied</c> instrument. Bounded: at most
/// <see cref="MaxRules"/> distinct names are kept; denials by further names count under
/// <see cref="OtherRules"/>, so a rule set cannot make the table or the metric's tag set grow
/// without limit. Local observation, not agreed state. Thread-safe (health reads it while the sieve
/// writes).
/// </summary>
public sealed class RuleDenialCounters
{
    public const int MaxRules = 256;
    public const string OtherRules = "(other)";

    private static readonly Counter<long> Denied = SieveMetrics.Meter.CreateCounter<long>("sieveq.rules.denied", "{message}", "Messages denied by the application rules, by deciding rule");

    private readonly Lock _gate = new();
    private readonly Dictionary<string, long> _counts = new(StringComparer.Ordinal);

    public void Count(string? reason)
    {
        var rule = RuleName(reason);
        lock (_gate)
        {
            if (!_counts.ContainsKey(rule) && _counts.Count >= MaxRules)
            {
                rule = OtherRules;
            }
            _counts[rule] = _counts.GetValueOrDefault(rule) + 1;
        }
        if (Denied.Enabled)
        {
            Denied.Add(1, new TagList { { "rule", rule } });
        }
    }

    public long this[string rule]
    {
        get
        {
            lock (_gate)
            {
                return _counts.GetValueOrDefault(rule);
            }
        }
    }

    /// <summary>Rule name and count, ordered by name.</summary>
    public IReadOnlyList<(string Rule, long Count)> Snapshot()
    {
        lock (_gate)
        {
            return _counts.OrderBy(kv => kv.Key, StringComparer.Ordinal).Select(kv => (kv.Key, kv.Value)).ToList();
        }
    }

    /// <summary>"rule: detail" gives "rule"; a reason without detail is the name itself.</summary>
    public static string RuleName(string? reason)
    {
        if (string.IsNullOrEmpty(reason))
        {
            return "(unnamed)";
        }
        var colon = reason.IndexOf(':', StringComparison.Ordinal);
        return colon > 0 ? reason[..colon] : reason;
    }
}
