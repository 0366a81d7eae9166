using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// Implemented by application rules that can be replaced through the ordering (the rule engine's
/// store of signed rule sets); the core only carries the commands and never interprets rule sets,
/// so it does not depend on the engine. <see cref="SieveReplicaApplication"/> looks for it on the
/// <see cref="IApplicationRules"/> it was given; plain rules (fixed routes) refuse every command.
/// </summary>
public interface IRuleSetControl
{
    /// <summary>The version deciding now (agreed state).</summary>
    int ActiveVersion { get; }

    /// <summary>Where the rules stand now, for the sieve's read model; called on the execution thread after each execution.</summary>
    RuleSetStanding Standing { get; }

    /// <summary>
    /// Off the ordering thread, before ordering: does the expensive work (signatures, compilation) and
    /// keeps the result for <see cref="Apply"/>. Must be thread-safe and must not change agreed state;
    /// the outcome of <see cref="Apply"/> may not depend on whether this ran.
    /// </summary>
    void Prepare(ReadOnlyMemory<byte> command);

    /// <summary>
    /// Executes one command in agreed order. A switch it applies decides from rule evaluation
    /// <paramref name="nextEvaluation"/> on. Deterministic: the result depends only on the command's
    /// bytes and agreed state, so every correct replica returns the same one. A refused command
    /// changes nothing.
    /// </summary>
    RuleSetResult Apply(ReadOnlyMemory<byte> command, long nextEvaluation);
}
