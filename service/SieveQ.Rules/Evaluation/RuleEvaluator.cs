using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Replica;
using SieveQ.Rules.Document;
using SieveQ.Rules.Formats;
using SieveQ.Rules.Matching;

namespace SieveQ.Rules.Evaluation;

/// <summary>Counts since this evaluator was created (not part of the agreed state).</summary>
public sealed record RuleEvaluatorStats(long Evaluated, long Allowed, long Denied, long Quarantines, long EvictedSenders, long EvictedFlows, int TrackedSenders, int TrackedFlows);

/// <summary>
/// Check (f) for one rule-set version: the compiled rules plus the state they keep (rate windows,
/// flow state machines, suspicion). Deterministic: the only time is the agreed time in the input,
/// comparisons are ordinal, no unordered collection is ever iterated, tables are bounded and evict
/// least-recently-used in agreed order. First matching rule decides; no match is "default-deny".
/// </summary>
public sealed partial class RuleEvaluator : IApplicationRules, IPayloadPrescan
{
    private readonly CompiledRuleSet _set;
    private readonly LruTable<int, SenderState> _senders;
    private readonly LruTable<FlowKey, FlowState> _flows;
    private long _uses;
    private long _evaluated;
    private long _allowed;
    private long _denied;
    private long _quarantines;

    internal RuleEvaluator(CompiledRuleSet set)
    {
        _set = set;
        _senders = new LruTable<int, SenderState>(set.Limits.MaxSenders);
        _flows = new LruTable<FlowKey, FlowState>(set.Limits.MaxFlows);
    }

    public CompiledRuleSet RuleSet => _set;

    public RuleEvaluatorStats Stats => new(_evaluated, _allowed, _denied, _quarantines, _senders.Evictions, _flows.Evictions, _senders.Count, _flows.Count);

    public RuleVerdict Evaluate(in RuleInput input) => Decide(input).ToVerdict();

    /// <summary>Thread-safe: reads only the compiled set, never this evaluator's state.</summary>
    public PayloadPrescan Prescan(ReadOnlyMemory<byte> payload) => _set.Prescan(payload);

    public RuleDecision Decide(in RuleInput input)
    {
        var d = DecideCore(input);
        _evaluated++;
        if (d.Allowed)
        {
            _allowed++;
        }
        else
        {
            _denied++;
        }
        RulesMetrics.Verdict(d);
        return d;
    }

    private RuleDecision DecideCore(in RuleInput input)
    {
        var data = input.Data.Span;
        var now = input.AgreedTimeMs;
        var sender = _senders.Find(input.Sender);
        if (sender is not null)
        {
            _senders.Touch(sender, ++_uses);
        }
        if (data.Length > _set.Limits.MaxMessageBytes)
        {
            return Deny(input, RuleDecision.SizeLimitRule, ViolationKind.Size, $"{data.Length} bytes, the rule set's limit is {_set.Limits.MaxMessageBytes}", null);
        }
        if (_set.Quarantine is { } q && sender?.Suspicion is { } counter && counter.IsQuarantined(now, q.Policy))
        {
            // No further suspicion while quarantined: the counter must be able to decay to a release.
            return new RuleDecision(false, RuleDecision.QuarantineRule, null, $"sender {input.Sender} is quarantined (suspicion {counter.Value(now, q.Policy)})");
        }
        var cache = _set.Patterns.Start(input.Prescan);
        var own = _set.RulesByReceiver.TryGetValue(input.Receiver, out var list) ? list : [];
        var any = _set.AnyReceiverRules;
        int i = 0, j = 0;
        while (i < own.Length || j < any.Length)
        {
            var rule = _set.Rules[j >= any.Length || (i < own.Length && own[i] < any[j]) ? own[i++] : any[j++]];
            if (!rule.Covers(input.Sender) || !rule.Active(now))
            {
                continue;
            }
            if (rule.Action == RuleAction.Deny)
            {
                if (rule.Contains == 0)
                {
                    return Deny(input, rule.Name, ViolationKind.Route, "denied by rule", rule.Suspicion);
                }
                if (_set.Patterns.AnyHit(data, rule.Contains, ref cache))
                {
                    return Deny(input, rule.Name, ViolationKind.Pattern, PatternDetail(data, rule.Contains, cache), rule.Suspicion);
                }
                continue;
            }
            return ApplyAllow(rule, input, ref cache);
        }
        return Deny(input, RuleDecision.DefaultDeny, ViolationKind.Route, $"no rule allows sender {input.Sender} to reach receiver {input.Receiver}", null);
    }

    /// <summary>The first matching allow rule's conditions; every one must hold, and only then does any state change.</summary>
    private RuleDecision ApplyAllow(CompiledRule rule, in RuleInput input, ref ScanCache cache)
    {
        var data = input.Data.Span;
        var now = input.AgreedTimeMs;
        if (rule.MaxBytes >= 0 && data.Length > rule.MaxBytes)
        {
            return Deny(input, rule.Name, ViolationKind.Size, $"{data.Length} bytes, at most {rule.MaxBytes}", null);
        }
        var type = MessageType.None;
        if (rule.Format is { } format)
        {
            var r = format.Check(data);
            if (!r.Ok)
            {
                return Deny(input, rule.Name, ViolationKind.Format, r.Problem, null);
            }
            type = r.Type;
        }
        if (rule.RejectPatterns != 0 && _set.Patterns.AnyHit(data, rule.RejectPatterns, ref cache))
        {
            return Deny(input, rule.Name, ViolationKind.Pattern, PatternDetail(data, rule.RejectPatterns, cache), null);
        }
        FlowState? flow = null;
        var step = default(FlowStep);
        if (rule.Flow is { } machine)
        {
            var key = rule.FlowRole == FlowRole.Request
                ? new FlowKey(machine.Index, input.Sender, input.Receiver)
                : new FlowKey(machine.Index, input.Receiver, input.Sender);
            flow = _flows.Find(key);
            var fresh = flow is null || (machine.IdleTimeoutMs is { } idle && now - flow.LastSeenMs > idle);
            step = machine.Step(fresh ? machine.Initial : flow!.State, fresh ? 0 : flow!.Outstanding, rule.FlowRole, type);
            if (!step.Ok)
            {
                return Deny(input, rule.Name, ViolationKind.Order, step.Problem, null);
            }
            flow ??= new FlowState(key);
        }
        var sender = _senders.Find(input.Sender);
        foreach (var rate in rule.Rates)
        {
            if (rate.Check(sender?.Rates[rate.Index], now, data.Length) is { } exceeded)
            {
                return Deny(input, rule.Name, ViolationKind.Rate, exceeded, null);
            }
        }
        if (rule.Flow is not null)
        {
            flow!.State = step.State;
            flow.Outstanding = step.Outstanding;
            flow.LastSeenMs = now;
            if (_flows.Find(flow.Key) is null)
            {
                Evicted(_flows.Add(flow, ++_uses), "flows");
            }
            else
            {
                _flows.Touch(flow, ++_uses);
            }
        }
        if (rule.Rates.Length > 0)
        {
            sender ??= AddSender(input.Sender);
            foreach (var rate in rule.Rates)
            {
                rate.Commit(sender.Rates[rate.Index] ??= rate.Open(now), now, data.Length);
            }
        }
        return new RuleDecision(true, rule.Name, null, null);
    }

    private RuleDecision Deny(in RuleInput input, string rule, ViolationKind kind, string? detail, int? suspicion)
    {
        if (_set.Quarantine is { } q)
        {
            var weight = suspicion ?? q.Increments[(int)kind];
            if (weight > 0)
            {
                var sender = _senders.Find(input.Sender) ?? AddSender(input.Sender);
                sender.Suspicion ??= new SuspicionCounter();
                if (sender.Suspicion.Add(input.AgreedTimeMs, weight, q.Policy))
                {
                    _quarantines++;
                    detail += $"; sender {input.Sender} quarantined";
                }
            }
        }
        return new RuleDecision(false, rule, kind, detail);
    }

    private string PatternDetail(ReadOnlySpan<byte> data, ulong sets, in ScanCache cache)
    {
        var set = _set.Patterns.FirstSet(sets, cache);
        var bit = set < 0 ? sets : 1UL << set;
        return $"pattern set {(set < 0 ? "?" : _set.Patterns.SetName(set))}: {_set.Patterns.Describe(data, bit)}";
    }

    private SenderState AddSender(int id)
    {
        var s = new SenderState(id, _set.Rates.Length);
        Evicted(_senders.Add(s, ++_uses), "senders");
        return s;
    }

    private static void Evicted(object? entry, string table)
    {
        if (entry is not null)
        {
            RulesMetrics.Eviction(table);
        }
    }
}
