using System.Collections.Immutable;

namespace SieveQ.Policy;

/// <summary>A policy in force and where it came from.</summary>
/// <param name="Generation">Counts swaps from 0 (the initial policy); lets readers notice a change cheaply.</param>
/// <param name="Fingerprint">The content it was read from; null for the initial policy.</param>
public sealed record AppliedPolicy(AgentPolicy Policy, long Generation, string? Source, string? Fingerprint, DateTimeOffset AppliedAt);

public sealed class PolicyAppliedEventArgs(AppliedPolicy applied, AppliedPolicy previous, ImmutableArray<string> warnings) : EventArgs
{
    public AppliedPolicy Applied { get; } = applied;

    public AppliedPolicy Previous { get; } = previous;

    public ImmutableArray<string> Warnings { get; } = warnings;
}

/// <summary>The alarm: a change was refused and <see cref="InForce"/> is still what the agent enforces.</summary>
public sealed class PolicyRejectedEventArgs(string source, string fingerprint, ImmutableArray<string> errors, AppliedPolicy inForce, DateTimeOffset at) : EventArgs
{
    public string Source { get; } = source;

    public string Fingerprint { get; } = fingerprint;

    public ImmutableArray<string> Errors { get; } = errors;

    public AppliedPolicy InForce { get; } = inForce;

    public DateTimeOffset At { get; } = at;
}
