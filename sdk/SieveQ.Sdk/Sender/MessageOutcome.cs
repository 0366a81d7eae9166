using SieveQ.Sieve.Envelope;

namespace SieveQ.Sdk.Sender;

/// <summary>How a message ended for its sender.</summary>
public enum MessageOutcomeKind
{
    /// <summary>
    /// f+1 replica-SQs took it, and their rules approved it and queued it for the receiver: from here the deployment
    /// delivers it (exactly once, in order) whatever crashes, once the receiver reads.
    /// </summary>
    Delivered,

    /// <summary>f+1 replica-SQs took it and rejected it (<see cref="MessageOutcome.Reason"/>, <see cref="MessageOutcome.Rule"/>): it will never be delivered.</summary>
    Rejected,

    /// <summary>
    /// No verdict within <see cref="SieveQSenderOptions.OutcomeTimeout"/>: the deployment did not acknowledge it in time. The
    /// message is not given up: it stays in the outbox and is retransmitted, and may still be delivered.
    /// </summary>
    TimedOut,

    /// <summary>
    /// f+1 replica-SQs took it but no longer knew its verdict: more than 64 of the sender's messages were rejected
    /// before its next acknowledgement request, and the oldest verdicts were let go (rare: it needs a burst of
    /// rejections out of the replicas' reorder buffer).
    /// </summary>
    VerdictUnknown,
}

/// <summary>The end of one message for its sender.</summary>
public sealed record MessageOutcome(long Seq, int Receiver, MessageOutcomeKind Kind, RejectionReason? Reason = null, string? Rule = null)
{
    public override string ToString() => Kind switch
    {
        MessageOutcomeKind.Rejected => $"message {Seq} to receiver {Receiver} rejected ({Reason}: {Rule})",
        _ => $"message {Seq} to receiver {Receiver}: {Kind}",
    };
}

/// <summary>
/// What <see cref="SieveQSender.SendAsync"/> returns once the message is numbered (and, with the outbox, durable): its
/// number and its <see cref="Outcome"/>, which completes when f+1 replica-SQs gave their verdict or the outcome
/// timeout passed. Converts to its sequence number, as SendAsync returned before.
/// </summary>
public sealed class SentMessage
{
    internal SentMessage(long seq, int receiver, Task<MessageOutcome> outcome)
    {
        Seq = seq;
        Receiver = receiver;
        Outcome = outcome;
    }

    public long Seq { get; }

    public int Receiver { get; }

    /// <summary>Completes with the message's outcome; faults only when the sender stopped (disposed or failed) before it.</summary>
    public Task<MessageOutcome> Outcome { get; }

    public static implicit operator long(SentMessage message) => message?.Seq ?? throw new ArgumentNullException(nameof(message));

    public long ToInt64() => Seq;

    public override string ToString() => $"message {Seq} to receiver {Receiver}";
}
