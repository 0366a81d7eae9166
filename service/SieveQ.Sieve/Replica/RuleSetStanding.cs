namespace SieveQ.Sieve.Replica;

/// <summary>Counts of the running rule set's payload scans: ahead of execution, found useful by it, or done on the execution thread.</summary>
public sealed record PrescanCounts(long Prescanned, long Found, long ScannedInline);

/// <summary>
/// Where replaceable rules stand, for status (<see cref="IRuleSetControl.Standing"/>): the running and kept
/// versions and the last applied command nonce (what `sieveq rules push` and `rollback` build their commands
/// against). <see cref="Prescans"/> reads the live, thread-safe counters of the version that was running when
/// this was taken, so it may be called from any thread.
/// </summary>
public sealed record RuleSetStanding(int ActiveVersion, int? PreviousVersion, long LastNonce, Func<PrescanCounts>? Prescans);
