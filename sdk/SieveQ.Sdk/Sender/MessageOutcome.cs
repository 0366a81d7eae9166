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
    /// <summary>One line for a log: the message, its receiver, the outcome and, for a rejection, its reason and rule.</summary>
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

    /// <summary>The message's sequence number in its sender's stream.</summary>
    public long Seq { get; }

    /// <summary>The receiver the message is addressed to.</summary>
    public int Receiver { get; }

    /// <summary>Completes with the message's outcome; faults only when the sender stopped (disposed or failed) before it.</summary>
    public Task<MessageOutcome> Outcome { get; }

    /// <summary>The message's sequence number, so code written when SendAsync returned a number still compiles.</summary>
    public static implicit operator long(SentMessage message) => message?.Seq ?? throw new ArgumentNullException(nameof(message));

    /// <summary>The message's sequence number (the named alternative to the implicit conversion).</summary>
    public long ToInt64() => Seq;

    /// <summary>The message and its receiver, for a log line.</summary>
    public override string ToString() => $"message {Seq} to receiver {Receiver}";
}
