namespace SieveQ.Sdk.Sender;

/// <summary>
/// The deployment did not answer within <see cref="SieveQSenderOptions.UnavailableAfter"/>: no room opened in the
/// outstanding window (SendAsync: the message was not numbered), or the acknowledged prefix did not move
/// (WaitAcknowledgedAsync). Messages already numbered stay with the sender, which goes on retransmitting them.
/// </summary>
public sealed class SieveQUnavailableException : Exception
{
    /// <summary>The deployment did not make room or acknowledge for <paramref name="waited"/>; <paramref name="outboxFull"/> says how full the outbox was, when that is why.</summary>
    public SieveQUnavailableException(int sender, long acknowledgedUpTo, int outstanding, TimeSpan waited, string? outboxFull = null)
        : base($"sender {sender}: the deployment did not answer for {waited.TotalSeconds:0.#} s ({outstanding} messages outstanding, acknowledged up to {acknowledgedUpTo})"
            + (outboxFull is null ? "" : $"; {outboxFull}"))
    {
        OutboxFull = outboxFull is not null;
        Sender = sender;
        AcknowledgedUpTo = acknowledgedUpTo;
        Outstanding = outstanding;
    }

    /// <summary>The sender that waited.</summary>
    public int Sender { get; }
    /// <summary>The highest sequence number f+1 replica-SQs had acknowledged (with all before it).</summary>
    public long AcknowledgedUpTo { get; }
    /// <summary>Messages numbered and not yet acknowledged.</summary>
    public int Outstanding { get; }

    /// <summary>The sender's durable outbox was at its bound: nothing more can be accepted until the deployment acknowledges.</summary>
    public bool OutboxFull { get; }
}
