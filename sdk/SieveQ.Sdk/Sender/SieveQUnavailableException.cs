namespace SieveQ.Sdk.Sender;

/// <summary>
/// The deployment did not answer within <see cref="SieveQSenderOptions.UnavailableAfter"/>: no room opened in the
/// outstanding window (SendAsync: the message was not numbered), or the acknowledged prefix did not move
/// (WaitAcknowledgedAsync). Messages already numbered stay with the sender, which goes on retransmitting them.
/// </summary>
public sealed class SieveQUnavailableException : Exception
{
    public SieveQUnavailableException(int sender, long acknowledgedUpTo, int outstanding, TimeSpan waited, string? outboxFull = null)
        : base($"sender {sender}: the deployment did not answer for {waited.TotalSeconds:0.#} s ({outstanding} messages outstanding, acknowledged up to {acknowledgedUpTo})"
            + (outboxFull is null ? "" : $"; {outboxFull}"))
    {
        OutboxFull = outboxFull is not null;
        Sender = sender;
        AcknowledgedUpTo = acknowledgedUpTo;
        Outstanding = outstanding;
    }

    public int Sender { get; }
    public long AcknowledgedUpTo { get; }
    public int Outstanding { get; }

    /// <summary>The sender's durable outbox was at its bound: nothing more can be accepted until the deployment acknowledges.</summary>
    public bool OutboxFull { get; }
}
