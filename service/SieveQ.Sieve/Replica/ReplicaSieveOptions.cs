using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// Tunables of the replica-SQ state machine. They are part of the replicated configuration: every
/// replica must run with the same values, or their states diverge.
/// </summary>
public sealed record ReplicaSieveOptions
{
    /// <summary>Sequence window per sender (bits). A sender's outstanding window must not exceed it.</summary>
    public int WindowSize { get; init; } = 8192;

    /// <summary>How far above a sender's highest number a message may jump.</summary>
    public long MaxAhead { get; init; } = 8192;

    /// <summary>Grant per sender at the replicas, messages/s. Kept above the pre-SQs' grant so a correct pre-SQ never trips it.</summary>
    public long GrantRatePerSecond { get; init; } = 20_000;

    public long GrantBurst { get; init; } = 40_000;

    /// <summary>
    /// Reorder buffer (4.3.3): hold a message at most this far above the sender's expected number; further
    /// ahead it is refused untaken. At least a sender's outstanding window (4,096 by default), so one lost
    /// message does not make a correct sender retransmit everything it sent after it.
    /// </summary>
    public int ReorderThreshold { get; init; } = 8192;

    /// <summary>Let held messages go (untaken) when their gap is still open after this many other messages were processed.</summary>
    public int ReorderPatience { get; init; } = 32_768;

    /// <summary>Held messages over all senders.</summary>
    public int MaxHeldTotal { get; init; } = 65_536;

    /// <summary>Approved-but-unacknowledged messages (plus held ones) per receiver.</summary>
    public int ReceiverQueueCapacity { get; init; } = 65_536;

    /// <summary>
    /// What each queued or held message costs against the byte budgets on top of its DATA: its numbers,
    /// digest and framing in the state and the snapshot, so that many tiny messages are bounded too.
    /// </summary>
    public const int ItemOverheadBytes = 64;

    /// <summary>A message's DATA plus <see cref="ItemOverheadBytes"/>: what it takes from the budgets below.</summary>
    public static long ChargedBytes(int dataBytes) => (long)dataBytes + ItemOverheadBytes;

    /// <summary>
    /// Bytes of approved-but-unacknowledged messages (plus held ones) per receiver. At least one message of the
    /// largest size the edge admits, so every admitted message finds room once the queue drains.
    /// </summary>
    public long ReceiverQueueBytes { get; init; } = 8L << 20;

    /// <summary>
    /// Bytes queued (and reserved by held messages) over all receivers: with the held budget, what bounds the
    /// agreed state, and so every checkpoint, snapshot and state transfer (see <see cref="SieveStateBudget"/>).
    /// </summary>
    public long QueuedBytesTotal { get; init; } = 16L << 20;

    /// <summary>Bytes of held messages over all senders.</summary>
    public long MaxHeldBytes { get; init; } = 4L << 20;

    /// <summary>Bytes of one sender's held messages: one sender's gap cannot take the whole buffer.</summary>
    public long MaxHeldBytesPerSender { get; init; } = (1L << 20) + (64 * 1024);

    /// <summary>Items per output batch to one receiver.</summary>
    public int OutputBatchMaxItems { get; init; } = 1024;

    /// <summary>Minimum agreed time between two ACKREQs of one sender that are answered.</summary>
    public long MinAckRequestIntervalMs { get; init; } = 5;

    /// <summary>Loss rate (ppm) above which the sender is moved to another pre-SQ.</summary>
    public int ReassignLossPpm { get; init; } = 100_000;

    /// <summary>
    /// Age an ACKREQ's claim of numbers sent must reach before they are measured for loss: what is younger may
    /// still be in flight (queued at a pre-SQ, waiting to be ordered), and late is not lost.
    /// </summary>
    public long LossGraceMs { get; init; } = 1_000;

    /// <summary>
    /// How long a pre-SQ holds back the frames of a sender an administrator quarantined, from the last of its messages
    /// the replicas refused: short, because readmission reaches the pre-SQ only through this expiry.
    /// </summary>
    public long AdminQuarantineHoldMs { get; init; } = 5_000;

    /// <summary>How long a WARNREQ marks its pre-SQ as overloaded.</summary>
    public long WarningHoldMs { get; init; } = 10_000;

    /// <summary>
    /// How long a sender moved off a pre-SQ for loss is not moved back onto it to spread load: a warning from its new
    /// pre-SQ alone must not return it to one that lost its messages (only its new pre-SQ's quarantine does).
    /// </summary>
    public long LossMoveHoldMs { get; init; } = 30_000;

    public SuspicionPolicy SenderSuspicion { get; init; } = SuspicionPolicy.Default;

    public SuspicionPolicy PreSqSuspicion { get; init; } = SuspicionPolicy.Default;

    /// <summary>
    /// Evidence weights. Replays weigh nothing by default: a correct sender retransmits through a second
    /// pre-SQ whenever acknowledgements are slow (start-up, a regency change), and a faulty pre-SQ can
    /// replay a correct sender's signed messages, so a replay is evidence against nobody. Replays are
    /// dropped and counted; what they can cost is bounded by the pre-SQs' per-sender grant.
    /// </summary>
    public int ReplayWeight { get; init; }

    public int GrantOverrunWeight { get; init; } = 2;

    /// <summary>A bad signature may be the sender's or a tampering pre-SQ's; both are charged, the pre-SQ more.</summary>
    public int BadSignatureSenderWeight { get; init; } = 10;

    public int BadSignaturePreSqWeight { get; init; } = 20;

    /// <summary>A pre-SQ forwarding unparsable or non-whitelisted input skipped its own checks.</summary>
    public int MalformedPreSqWeight { get; init; } = 20;

    /// <summary>
    /// Entries of the table of senders enrolled or revoked through the ordering (each at most
    /// <see cref="EnrolmentChangeTable.MaxEntryBytes"/>); an enrolment or revocation past it is refused.
    /// </summary>
    public int MaxEnrolmentChanges { get; init; } = 256;

    public void Validate()
    {
        if (MaxEnrolmentChanges is < 0 or > EnrolmentChangeTable.MaxEntriesLimit)
        {
            throw new ArgumentException($"maxEnrolmentChanges {MaxEnrolmentChanges} must be 0 to {EnrolmentChangeTable.MaxEntriesLimit}");
        }
        if (WindowSize < 64 || WindowSize % 64 != 0 || MaxAhead < 1 || ReorderThreshold < 0 || ReorderPatience < 1
            || MaxHeldTotal < 0 || ReceiverQueueCapacity < 1 || OutputBatchMaxItems < 1 || GrantRatePerSecond < 1 || GrantBurst < 1
            || MaxHeldBytes < 0 || MaxHeldBytesPerSender < 0 || LossGraceMs < 0 || LossMoveHoldMs < 0 || AdminQuarantineHoldMs is < 0 or > Envelope.ExecuteResultCodec.MaxHoldMs)
        {
            throw new ArgumentException("replica sieve options out of range");
        }
        var largest = ChargedBytes(Envelope.EnvelopeLimits.MaxDataBytes);
        if (ReceiverQueueBytes < largest)
        {
            throw new ArgumentException($"receiverQueueBytes {ReceiverQueueBytes} is below one message of the largest size ({largest} bytes): such a message could never be taken and its sender would retry it for ever");
        }
        if (QueuedBytesTotal < ReceiverQueueBytes)
        {
            throw new ArgumentException($"queuedBytesTotal {QueuedBytesTotal} is below one receiver's queue ({ReceiverQueueBytes})");
        }
        if (MaxHeldBytesPerSender > MaxHeldBytes)
        {
            throw new ArgumentException($"maxHeldBytesPerSender {MaxHeldBytesPerSender} is above maxHeldBytes {MaxHeldBytes}");
        }
    }
}
