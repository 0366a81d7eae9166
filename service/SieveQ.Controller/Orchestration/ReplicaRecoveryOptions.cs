namespace SieveQ.Controller.Orchestration;

/// <summary>How long a recovery waits, and how often it looks.</summary>
public sealed record ReplicaRecoveryOptions
{
    /// <summary>A recovered replica must have decided as far as the others had when it stopped within this time of its start, or the recovery fails (and a round stops).</summary>
    public TimeSpan CatchUpTimeout { get; init; } = TimeSpan.FromSeconds(120);

    /// <summary>A round waits this long before each replica for 2f+1 of the others to be healthy (the one recovered just before is still reconnecting).</summary>
    public TimeSpan QuorumWait { get; init; } = TimeSpan.FromSeconds(60);

    public TimeSpan PollInterval { get; init; } = TimeSpan.FromMilliseconds(250);
}
