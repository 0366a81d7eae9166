namespace SieveQ.Sieve.Replica;

/// <summary>
/// What application rules computed from a payload's bytes ahead of execution (<see cref="IPayloadPrescan"/>).
/// <see cref="Owner"/> is whatever computed it (the rules compare it by reference, so a result computed
/// under another rule-set version is never taken for this one); <see cref="Hits"/> is theirs to interpret.
/// The core only carries it from the verdict cache to <see cref="RuleInput"/>.
/// </summary>
public readonly record struct PayloadPrescan(object? Owner, ulong Hits)
{
    public static PayloadPrescan None => default;
}

/// <summary>
/// Implemented by application rules that have per-message work depending only on the payload's bytes
/// and the rules in force, such as a content scan. The verifier calls it on worker threads, in parallel,
/// as requests arrive, for each sender message whose signature checked out, and keeps the result beside
/// the signature verdict; execution hands it to <see cref="IApplicationRules.Evaluate"/> in
/// <see cref="RuleInput.Prescan"/>. The execution thread is the serial part of an instance, where a
/// microsecond per message shows up as latency near capacity.
/// <para>
/// Must be thread-safe and must not change agreed state. What <see cref="IApplicationRules.Evaluate"/>
/// decides may not depend on whether a prescan is present, so every replica decides the same whether
/// its cache kept the result or not.
/// </para>
/// </summary>
public interface IPayloadPrescan
{
    PayloadPrescan Prescan(ReadOnlyMemory<byte> payload);
}
