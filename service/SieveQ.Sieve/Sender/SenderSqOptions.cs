namespace SieveQ.Sieve.Sender;

/// <summary>Tunables of a sender-SQ.</summary>
public sealed record SenderSqOptions
{
    /// <summary>
    /// Messages sent but not yet acknowledged by f+1 replicas, plus staged ones. Reaching it is the
    /// back-pressure an application sees. Must stay below the replicas' window size.
    /// </summary>
    public int MaxOutstanding { get; init; } = 4096;

    /// <summary>Staged messages are signed as one Merkle batch; one message alone gets its own signature.</summary>
    public int MaxBatch { get; init; } = 256;

    /// <summary>
    /// Least time-out before a message is retransmitted, through another pre-SQ, and the time-out until
    /// the first acknowledgement delay is measured; doubles per attempt up to the maximum. The time-out
    /// in force adapts to measured acknowledgement delays (see <see cref="RetransmitTimeout"/>).
    /// </summary>
    public long RetransmitAfterMs { get; init; } = 1_000;

    public long MaxRetransmitAfterMs { get; init; } = 8_000;

    /// <summary>How often an ACKREQ goes out while messages are outstanding.</summary>
    public long AckRequestIntervalMs { get; init; } = 50;

    /// <summary>First wait for ACKRES; doubles on every unanswered ACKREQ (paper 4.4.2 step 1).</summary>
    public long AckResponseWaitMs { get; init; } = 200;

    /// <summary>
    /// Longest wait between unanswered ACKREQs. Kept short: while unanswered the window cannot move, so a
    /// long wait turns one lost ACKRES into seconds of stalled sending; an ACKREQ is one small item.
    /// </summary>
    public long MaxAckResponseWaitMs { get; init; } = 2_000;
}
