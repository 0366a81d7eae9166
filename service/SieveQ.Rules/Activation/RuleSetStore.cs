using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;
using SieveQ.Rules.Document;
using SieveQ.Rules.Evaluation;

namespace SieveQ.Rules.Activation;

public enum SwitchKind : byte
{
    Activate = 1,
    Rollback = 2,
}

/// <summary>A switch ordered for a future sequence number.</summary>
public sealed record PendingSwitch(SwitchKind Kind, long AtSequence, CompiledRuleSet? Target);

public enum ScheduleResult
{
    Scheduled,
    VersionNotNewer,
    SwitchAlreadyPending,
    SequenceAlreadyPassed,
    NothingToRollBackTo,
}

/// <summary>
/// The running rule set, the previous one (for rollback) and at most one scheduled switch, all in
/// agreed state. A switch is an ordered command: it is scheduled for a sequence number, and every
/// replica's host calls <see cref="AdvanceTo"/> with each decision's sequence number before executing
/// it, so all of them change version at the same message. Pure: no clock, no I/O. Versions only go
/// up (a replayed old, validly signed document is refused); rollback is the one way back, and it
/// returns to the retained previous version. State carries across a switch where it still has a
/// meaning (<see cref="RuleEvaluator.TakeOver"/>), so a rule-set update never clears a quarantine.
/// </summary>
public sealed class RuleSetStore : IApplicationRules, IPayloadPrescan
{
    private static readonly byte[] StoreTag = "SIEVEQ/RULESET-STORE/v1"u8.ToArray();

    private readonly CompileOptions _options;
    private RuleEvaluator _evaluator;

    public RuleSetStore(CompiledRuleSet initial, CompileOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(initial);
        _options = options ?? CompileOptions.Default;
        _evaluator = initial.CreateEvaluator();
        HighestVersion = initial.Version;
        Sequence = -1;
    }

    public CompiledRuleSet Current => _evaluator.RuleSet;

    public CompiledRuleSet? Previous { get; private set; }

    public RuleEvaluator Evaluator => _evaluator;

    public int HighestVersion { get; private set; }

    /// <summary>The last sequence number passed to <see cref="AdvanceTo"/> (-1 before the first).</summary>
    public long Sequence { get; private set; }

    public PendingSwitch? Pending { get; private set; }

    public ScheduleResult ScheduleActivation(CompiledRuleSet next, long atSequence)
    {
        ArgumentNullException.ThrowIfNull(next);
        var refusal = CommonChecks(atSequence);
        if (refusal is not null)
        {
            return refusal.Value;
        }
        if (next.Version <= HighestVersion)
        {
            return ScheduleResult.VersionNotNewer;
        }
        Pending = new PendingSwitch(SwitchKind.Activate, atSequence, next);
        return ScheduleResult.Scheduled;
    }

    public ScheduleResult ScheduleRollback(long atSequence)
    {
        var refusal = CommonChecks(atSequence);
        if (refusal is not null)
        {
            return refusal.Value;
        }
        if (Previous is null)
        {
            return ScheduleResult.NothingToRollBackTo;
        }
        Pending = new PendingSwitch(SwitchKind.Rollback, atSequence, null);
        return ScheduleResult.Scheduled;
    }

    /// <summary>Called before executing decision <paramref name="sequence"/>; true when the version changed here.</summary>
    public bool AdvanceTo(long sequence)
    {
        if (sequence < Sequence)
        {
            throw new ArgumentOutOfRangeException(nameof(sequence), $"sequence numbers only grow ({sequence} after {Sequence})");
        }
        Sequence = sequence;
        if (Pending is not { } p || sequence < p.AtSequence)
        {
            return false;
        }
        var target = p.Kind == SwitchKind.Activate ? p.Target! : Previous!;
        var next = target.CreateEvaluator();
        next.TakeOver(_evaluator);
        Previous = _evaluator.RuleSet;
        _evaluator = next;
        HighestVersion = Math.Max(HighestVersion, target.Version);
        Pending = null;
        return true;
    }

    public RuleVerdict Evaluate(in RuleInput input) => _evaluator.Evaluate(input);

    /// <summary>
    /// Scans ahead for the running version. Called off the execution thread, so it may see a version that
    /// is no longer running when the message executes: the evaluator then ignores it and scans inline.
    /// </summary>
    public PayloadPrescan Prescan(ReadOnlyMemory<byte> payload) => Volatile.Read(ref _evaluator).Prescan(payload);

    public RuleDecision Decide(in RuleInput input) => _evaluator.Decide(input);

    /// <summary>
    /// "SIEVEQ/RULESET-STORE/v1" | i64 sequence | u32 highest version | current document | u8 has
    /// previous [| previous document] | u8 pending kind (0 none) [| u64 at [| target document]] |
    /// evaluator state. Documents are their canonical bytes (u32 length + bytes), so a replica that
    /// catches up by state transfer gets the rule sets themselves, not just their names.
    /// </summary>
    public byte[] SnapshotState()
    {
        using var w = new CanonicalWriter(Current.Document.CanonicalBytes.Length + 256);
        w.Raw(StoreTag);
        w.I64(Sequence);
        w.Id(HighestVersion);
        w.Bytes(Current.Document.CanonicalBytes);
        w.Bool(Previous is not null);
        if (Previous is not null)
        {
            w.Bytes(Previous.Document.CanonicalBytes);
        }
        w.U8(Pending is null ? (byte)0 : (byte)Pending.Kind);
        if (Pending is { } p)
        {
            w.Seq(p.AtSequence);
            if (p.Target is not null)
            {
                w.Bytes(p.Target.Document.CanonicalBytes);
            }
        }
        w.Bytes(_evaluator.SnapshotState());
        return w.ToArray();
    }

    /// <summary>Throws only <see cref="MalformedEnvelopeException"/>; on failure nothing changes.</summary>
    public void RestoreState(ReadOnlySpan<byte> state)
    {
        var r = new CanonicalReader(state);
        if (!r.Take(StoreTag.Length, "rule-set store tag").SequenceEqual(StoreTag))
        {
            throw new MalformedEnvelopeException("not a rule-set store state");
        }
        var sequence = r.I64("sequence");
        var highest = r.Id("highest version");
        var current = Document(r.Bytes(RuleSetParser.MaxDocumentBytes, "current rule set"));
        var previous = r.Bool("has previous") ? Document(r.Bytes(RuleSetParser.MaxDocumentBytes, "previous rule set")) : null;
        PendingSwitch? pending = r.U8("pending kind") switch
        {
            0 => null,
            1 => new PendingSwitch(SwitchKind.Activate, r.Seq("switch sequence"), Document(r.Bytes(RuleSetParser.MaxDocumentBytes, "pending rule set"))),
            2 => new PendingSwitch(SwitchKind.Rollback, r.Seq("switch sequence"), null),
            var k => throw new MalformedEnvelopeException($"pending switch kind {k}"),
        };
        var evaluatorState = r.Bytes(int.MaxValue, "rules state");
        r.End("rule-set store");
        if (sequence < -1 || highest < current.Version || (pending?.Kind == SwitchKind.Rollback && previous is null))
        {
            throw new MalformedEnvelopeException("inconsistent rule-set store state");
        }
        var evaluator = current.CreateEvaluator();
        evaluator.RestoreState(evaluatorState);
        _evaluator = evaluator;
        Previous = previous;
        Pending = pending;
        Sequence = sequence;
        HighestVersion = highest;
    }

    private ScheduleResult? CommonChecks(long atSequence)
    {
        if (atSequence <= Sequence)
        {
            return ScheduleResult.SequenceAlreadyPassed;
        }
        if (Pending is not null)
        {
            return ScheduleResult.SwitchAlreadyPending;
        }
        return null;
    }

    /// <summary>A rule set from a snapshot: the one already held when the bytes match, else compiled from them.</summary>
    private CompiledRuleSet Document(ReadOnlySpan<byte> canonical)
    {
        foreach (var held in new[] { _evaluator.RuleSet, Previous, Pending?.Target })
        {
            if (held is not null && canonical.SequenceEqual(held.Document.CanonicalBytes))
            {
                return held;
            }
        }
        try
        {
            // Documents in agreed state passed the signature check before they were ordered.
            return RuleSetLoader.CompileUnsigned(canonical.ToArray(), _options);
        }
        catch (RuleSetException e)
        {
            throw new MalformedEnvelopeException($"rule set in the snapshot does not compile: {e.Message}", e);
        }
    }
}
