using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    private long _ruleSetCommandsApplied;
    private long _ruleSetCommandsRefused;

    /// <summary>The rule-set version deciding now, or null when the rules cannot be replaced (fixed routes).</summary>
    public int? ActiveRuleSetVersion => _ruleSets?.ActiveVersion;

    /// <summary>Rule-set commands applied since this replica started (local count, not agreed state).</summary>
    public long RuleSetCommandsApplied => _ruleSetCommandsApplied;

    /// <summary>Rule-set commands refused since this replica started (local count, not agreed state).</summary>
    public long RuleSetCommandsRefused => _ruleSetCommandsRefused;

    private static ReadOnlyMemory<byte>? RuleSetCommandIn(OrderingRequest payload)
    {
        foreach (var item in payload.Items)
        {
            if (item.Span[0] == (byte)StructureKind.RuleSetCommand)
            {
                return item;
            }
        }
        return null;
    }

    /// <summary>
    /// A rule-set command is self-authenticated (the pinned administrator key), so it is taken from
    /// any ordering client, quarantined pre-SQs included: the pre-SQ only carries it. It travels
    /// alone, so its request's result can be the command's own outcome; a request mixing it with
    /// other items is refused as a whole, as no correct pre-SQ builds one. The switch is applied here,
    /// in agreed order, and decides from the next rule evaluation on: every replica switches at the
    /// same message.
    /// </summary>
    private byte[] ExecuteRuleSetCommand(OrderingRequest payload, ReadOnlyMemory<byte> command, ref Tally t)
    {
        RuleSetResult result;
        if (payload.Items.Count != 1)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t, payload.Items.Count);
            SuspectPreSq(payload.Origin, _options.MalformedPreSqWeight);
            result = new RuleSetResult(false, ActiveRuleSetVersion ?? 0, _processed + 1,
                "refused: a rule-set command must be the only item of its ordering request");
        }
        else if (_ruleSets is null)
        {
            result = new RuleSetResult(false, 0, _processed + 1,
                "refused: this deployment runs fixed routes; configure a rule set (deployment rules section) to replace rules through the ordering");
        }
        else
        {
            result = _ruleSets.Apply(command, _processed + 1);
        }
        if (result.Applied)
        {
            _ruleSetCommandsApplied++;
        }
        else
        {
            _ruleSetCommandsRefused++;
        }
        return RuleSetResultCodec.Encode(result);
    }
}
