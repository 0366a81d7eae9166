namespace SieveQ.Sdk.Receiver;

/// <summary>A snapshot of one receiver's counters, for health reports and benchmarks.</summary>
public sealed record SieveQReceiverStats(
    int Receiver,
    long Delivered,
    long Committed,
    long OutputsAccepted,
    long OutputsRejected,
    long FetchesSent,
    long FetchesAnswered,
    long Resubscribes,
    long AcknowledgementsSent,
    long AcknowledgementsFailed);
