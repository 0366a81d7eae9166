namespace SieveQ.Sieve.Diagnostics;

/// <summary>The stages a host's <see cref="IStageMarks"/> records; <see cref="InPathOrder"/> lists them as a message meets them.</summary>
public static class StageNames
{
    public const string SenderNumbered = "sender numbered";
    public const string SenderFlushed = "sender signed+sent";
    public const string PreSqPassed = "pre-SQ checks passed";
    public const string PreSqSubmitted = "pre-SQ batch submitted";
    public const string ReplicaArrived = "replica request arrived";
    public const string ReplicaVerified = "replica signatures checked";
    public const string ReplicaExecuted = "replica executing (ordered)";
    public const string ReplicaPublished = "replica output to stream";
    public const string ReceiverVoted = "post-SQ voted";
    public const string ApplicationRead = "application read";

    public static IReadOnlyList<string> InPathOrder { get; } =
    [
        SenderNumbered, SenderFlushed, PreSqPassed, PreSqSubmitted, ReplicaArrived, ReplicaVerified,
        ReplicaExecuted, ReplicaPublished, ReceiverVoted, ApplicationRead,
    ];
}
