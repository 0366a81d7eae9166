namespace SieveQ.Sdk.Sender;

/// <summary>
/// A snapshot of one sender's counters, for health reports and benchmarks. <c>OutboxPending</c> and <c>OutboxBytes</c>
/// are the accepted messages its durable outbox holds until acknowledged (0 with the outbox off).
/// </summary>
public sealed record SieveQSenderStats(
    int Sender,
    long Accepted,
    long LastSeq,
    long AcknowledgedUpTo,
    int Outstanding,
    int AssignedPreSq,
    long FramesSent,
    long FramesDropped,
    long AckResponses,
    long AckResponsesRejected,
    long Reconnects,
    long Retransmissions,
    long RetransmitTimeoutMs,
    long RootsSigned,
    int OutboxPending,
    long OutboxBytes,
    long OutboxCompactions);
