using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Replica;
using SieveQ.Rules.Document;
using SieveQ.Rules.Evaluation;
using SieveQ.Rules.Matching;

namespace SieveQ.Rules;

/// <summary>What a rule set contains, for `sieveq rules check` and the admin console.</summary>
public sealed record RuleSetSummary(int Version, string? Name, int Rules, int Senders, int Receivers, int Topics, int Formats,
    int PatternSets, int Literals, int Regexes, int Rates, int Windows, int Flows, bool Quarantine);

/// <summary>Payload scans this version did ahead of execution, evaluations that took one, and evaluations that scanned inline.</summary>
public sealed record PrescanStats(long Prescanned, long Found, long ScannedInline);

/// <summary>The quarantine policy in the core's integer units, with the increment per kind of violation.</summary>
internal sealed record QuarantinePolicy(SuspicionPolicy Policy, int[] Increments);

/// <summary>
/// One version of the rules, compiled once: immutable and shareable between evaluators. The state that
/// changes per message (rate windows, flows, suspicion) lives in a <see cref="RuleEvaluator"/>.
/// </summary>
public sealed class CompiledRuleSet
{
    internal CompiledRuleSet(RuleSetDocument document, LiteralEngine engine, CompiledRule[] rules, Dictionary<int, int[]> byReceiver,
        int[] anyReceiver, PatternScanner patterns, RateLimit[] rates, FlowMachine[] flows, QuarantinePolicy? quarantine, RuleSetSummary summary)
    {
        Document = document;
        Engine = engine;
        Rules = rules;
        RulesByReceiver = byReceiver;
        AnyReceiverRules = anyReceiver;
        Patterns = patterns;
        Rates = rates;
        Flows = flows;
        Quarantine = quarantine;
        Summary = summary;
        RateByName = rates.ToDictionary(r => r.Name, StringComparer.Ordinal);
        FlowByName = flows.ToDictionary(f => f.Name, StringComparer.Ordinal);
    }

    public RuleSetDocument Document { get; }

    public int Version => Document.Version;

    /// <summary>SHA-256 of the canonical document.</summary>
    public ReadOnlyMemory<byte> Digest => Document.Digest;

    public string DigestHex => Convert.ToHexStringLower(Document.Digest);

    public LiteralEngine Engine { get; }

    public RuleSetSummary Summary { get; }

    public RuleSetLimits Limits => Document.Limits;

    internal CompiledRule[] Rules { get; }

    /// <summary>Per receiver, the rules that name it (directly or through a topic), in document order.</summary>
    internal Dictionary<int, int[]> RulesByReceiver { get; }

    /// <summary>Rules with "to": "any", in document order; merged with the receiver's own list at evaluation.</summary>
    internal int[] AnyReceiverRules { get; }

    internal PatternScanner Patterns { get; }

    public PrescanStats Prescans => new(Patterns.Prescanned, Patterns.Found, Patterns.ScannedInline);

    /// <summary>The literal scan of a payload ahead of execution (thread-safe); an oversized one is denied before any scan.</summary>
    public PayloadPrescan Prescan(ReadOnlyMemory<byte> payload) =>
        payload.Length <= Limits.MaxMessageBytes ? Patterns.Prescan(payload.Span) : default;

    internal RateLimit[] Rates { get; }

    internal FlowMachine[] Flows { get; }

    internal QuarantinePolicy? Quarantine { get; }

    internal Dictionary<string, RateLimit> RateByName { get; }

    internal Dictionary<string, FlowMachine> FlowByName { get; }

    /// <summary>A fresh evaluator (empty state) for this version.</summary>
    public RuleEvaluator CreateEvaluator() => new(this);
}
