using SieveQ.Protocol.V1;
using SieveQ.Rules;
using SieveQ.Rules.Evaluation;
using SieveQ.Sieve.Replica;

namespace SieveQ.Controller.RuleSets;

/// <summary>
/// Decides sample messages with a rule set's own evaluator, the replicas' engine, in the controller's memory: one fresh
/// evaluator per dry run, so samples see each other's effect (rate limits, flows, suspicion) as consecutive messages
/// would, and nothing reaches the deployment.
/// </summary>
public static class RuleSetDryRun
{
    public const int MaxSamples = 64;

    public static IReadOnlyList<RuleDecision> Decide(CompiledRuleSet ruleSet, IReadOnlyList<RuleSetSample> samples, long agreedTimeMs)
    {
        ArgumentNullException.ThrowIfNull(ruleSet);
        ArgumentNullException.ThrowIfNull(samples);
        if (samples.Count > MaxSamples)
        {
            throw new RuleSetCheckException($"{samples.Count} samples; a dry run takes at most {MaxSamples}");
        }
        foreach (var s in samples)
        {
            if (s.Sender > int.MaxValue || s.Receiver > int.MaxValue)
            {
                throw new RuleSetCheckException($"sender {s.Sender} or receiver {s.Receiver} is not a valid id");
            }
        }
        var evaluator = ruleSet.CreateEvaluator();
        var sequences = new Dictionary<int, long>();
        var decisions = new List<RuleDecision>(samples.Count);
        foreach (var s in samples)
        {
            var sender = (int)s.Sender;
            var seq = sequences[sender] = sequences.GetValueOrDefault(sender) + 1;
            decisions.Add(evaluator.Decide(new RuleInput(agreedTimeMs, sender, seq, (int)s.Receiver, s.Payload.Memory)));
        }
        return decisions;
    }
}
