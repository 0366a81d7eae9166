namespace SieveQ.Sieve.Replica;

/// <summary>
/// What a rule sees of one message: the agreed time and the message's fields, plus what the rules
/// computed from the payload ahead of execution, when the verifier's cache still had it.
/// </summary>
public readonly record struct RuleInput(long AgreedTimeMs, int Sender, long SenderSeq, int Receiver, ReadOnlyMemory<byte> Data, PayloadPrescan Prescan = default);

/// <summary>Allowed, or denied with a short reason for counters and the admin console.</summary>
public readonly record struct RuleVerdict(bool Allowed, string? Reason)
{
    public static RuleVerdict Allow => new(true, null);

    public static RuleVerdict Deny(string reason) => new(false, reason);
}

/// <summary>
/// Check (f): application rules, applied by every replica to the same messages in the same agreed
/// order. An implementation must be deterministic: no clocks (use <see cref="RuleInput.AgreedTimeMs"/>),
/// no randomness, no iteration over unordered collections, no I/O. Stateful rules keep their state in
/// <see cref="SnapshotState"/> so checkpoints and state transfer carry it.
/// </summary>
public interface IApplicationRules
{
    /// <summary>Called exactly once per message that passed (e), in agreed order.</summary>
    RuleVerdict Evaluate(in RuleInput input);

    byte[] SnapshotState();

    void RestoreState(ReadOnlySpan<byte> state);
}
