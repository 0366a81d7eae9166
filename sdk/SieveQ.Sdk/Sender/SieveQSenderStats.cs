namespace SieveQ.Sdk.Sender;

/// <summary>
/// A snapshot of one sender's counters, for health reports and benchmarks. <c>OutboxPending</c> and <c>OutboxBytes</c>
/// are the accepted messages its durable outbox holds until acknowledged (0 with the outbox off). <c>Delivered</c>,
/// <c>Rejected</c>, <c>TimedOut</c> and <c>VerdictUnknown</c> count this run's message outcomes (<see cref="MessageOutcomeKind"/>;
/// <c>Rejected</c> also counts rejections of an earlier run's messages the outbox sent again). <c>VerdictLatency</c>: from
/// numbering to f+1 replicas' verdict (delivered or rejected), over roughly the last minute.
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
    long OutboxCompactions,
    long Delivered = 0,
    long Rejected = 0,
    long TimedOut = 0,
    long VerdictUnknown = 0,
    LatencyPercentiles VerdictLatency = default);
