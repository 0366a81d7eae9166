using System.Diagnostics;
using System.Diagnostics.Metrics;
using SieveQ.Rules.Evaluation;

namespace SieveQ.Rules;

/// <summary>
/// The rule engine's instruments on the "SieveQ.Rules" meter: verdicts by rule (rule names are bounded
/// by the rule set) and evictions from the bounded state tables, which an operator must see because an
/// evicted flow or sender starts again from a clean slate.
/// </summary>
public static class RulesMetrics
{
    public const string MeterName = "SieveQ.Rules";

    public static readonly Meter Meter = new(MeterName, "1.0");

    public static readonly Counter<long> Verdicts = Meter.CreateCounter<long>("sieveq.rules.verdicts", "{message}", "Rule verdicts, by outcome and deciding rule");

    public static readonly Counter<long> Evictions = Meter.CreateCounter<long>("sieveq.rules.evictions", "{entry}", "Entries dropped from a full state table (senders, flows)");

    public static readonly Counter<long> PrefilterFallbacks = Meter.CreateCounter<long>("sieveq.rules.prefilter_fallbacks", "{payload}",
        "Payloads whose prefix-screened scan used up its walk budget and finished with the automaton (traffic built to pass the screen)");

    internal static void Verdict(in RuleDecision d)
    {
        if (Verdicts.Enabled)
        {
            Verdicts.Add(1, new TagList { { "verdict", d.Allowed ? "allow" : "deny" }, { "rule", d.Rule } });
        }
    }

    internal static void Eviction(string table)
    {
        if (Evictions.Enabled)
        {
            Evictions.Add(1, new KeyValuePair<string, object?>("table", table));
        }
    }
}
