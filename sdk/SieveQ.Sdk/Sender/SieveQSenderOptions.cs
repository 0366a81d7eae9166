using SieveQ.Sieve.Sender;

namespace SieveQ.Sdk.Sender;

/// <summary>Tunables of <see cref="SieveQSender"/> (the sieve tunables themselves are in <see cref="Protocol"/>).</summary>
public sealed record SieveQSenderOptions
{
    /// <summary>The sender-SQ's own tunables: outstanding window (back-pressure), batch size, time-outs.</summary>
    public SenderSqOptions Protocol { get; init; } = new();

    /// <summary>Flush as soon as this many messages are staged: one Merkle signature covers them all.</summary>
    public int FlushAtStaged { get; init; } = 256;

    /// <summary>
    /// Otherwise at most one flush per this interval: a message staged after a quiet interval goes out
    /// at once (an idle sender pays no delay), and under load everything staged within the interval
    /// shares one signature, which the replicas then verify once instead of per message. This is the
    /// interval with an empty outstanding window; it stretches towards <see cref="MaxFlushDelay"/> as the
    /// window fills (see <see cref="FlushPacing"/>).
    /// </summary>
    public TimeSpan FlushDelay { get; init; } = TimeSpan.FromMilliseconds(1);

    /// <summary>The flush interval with a full outstanding window; equal to <see cref="FlushDelay"/> for a fixed interval.</summary>
    public TimeSpan MaxFlushDelay { get; init; } = TimeSpan.FromMilliseconds(8);

    /// <summary>First wait before reconnecting to a pre-SQ; doubles per failure up to <see cref="MaxReconnectDelay"/>.</summary>
    public TimeSpan ReconnectDelay { get; init; } = TimeSpan.FromMilliseconds(50);

    /// <summary>The longest wait between two attempts to connect to a pre-SQ.</summary>
    public TimeSpan MaxReconnectDelay { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>Frames queued for one pre-SQ before the oldest are dropped (the sender-SQ retransmits them).</summary>
    public int LinkQueueCapacity { get; init; } = 16_384;

    /// <summary>SendAsync calls waiting to be numbered; more callers wait on the queue itself.</summary>
    public int SendQueueCapacity { get; init; } = 1024;

    /// <summary>
    /// The pre-SQ to start with (null: spread senders over the pre-SQs by id). The replicas may
    /// reassign the sender; the sender-SQ obeys once f+1 of them agree.
    /// </summary>
    public int? InitialPreSq { get; init; }

    /// <summary>
    /// How long SendAsync waits for room in the outstanding window, and WaitAcknowledgedAsync for any progress of the
    /// acknowledged prefix, before giving up with <see cref="SieveQUnavailableException"/> instead of waiting for ever
    /// on a deployment that is gone. <see cref="Timeout.InfiniteTimeSpan"/> waits for ever. What was numbered is kept
    /// and still retransmitted while the sender lives.
    /// </summary>
    public TimeSpan UnavailableAfter { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// How long a message's <see cref="SentMessage.Outcome"/> waits for the replicas' verdict after it was numbered before
    /// it ends as <see cref="MessageOutcomeKind.TimedOut"/> (the message itself is still retransmitted and kept in the
    /// outbox). <see cref="Timeout.InfiniteTimeSpan"/> waits for ever.
    /// </summary>
    public TimeSpan OutcomeTimeout { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>The durable outbox that keeps accepted messages across crashes until they are acknowledged (on by default).</summary>
    public SenderOutboxOptions Outbox { get; init; } = new();

    internal void Validate()
    {
        ArgumentNullException.ThrowIfNull(Protocol);
        ArgumentNullException.ThrowIfNull(Outbox);
        if (FlushAtStaged < 1 || FlushDelay < TimeSpan.Zero || MaxFlushDelay < FlushDelay || MaxFlushDelay > TimeSpan.FromSeconds(1) || ReconnectDelay <= TimeSpan.Zero || MaxReconnectDelay < ReconnectDelay
            || !Outbox.IsValid || LinkQueueCapacity < 1 || SendQueueCapacity < 1 || Protocol.MaxOutstanding < 1
            || (UnavailableAfter <= TimeSpan.Zero && UnavailableAfter != Timeout.InfiniteTimeSpan)
            || (OutcomeTimeout <= TimeSpan.Zero && OutcomeTimeout != Timeout.InfiniteTimeSpan))
        {
            throw new ArgumentException("sender options out of range");
        }
    }
}
