namespace SieveQ.Sdk.Sender;

/// <summary>Why <see cref="SieveQSender.SendAsync"/> refused a message before numbering it.</summary>
public enum SendRefusal
{
    /// <summary>The receiver is not in the deployment's enrolment: no replica-SQ would queue anything for it.</summary>
    ReceiverNotEnrolled,

    /// <summary>The deployment's routes have none from this sender to the receiver: the replicas would deny it.</summary>
    NoRoute,

    /// <summary>The data is above what the route (or the sieve) admits.</summary>
    TooLarge,
}

/// <summary>
/// A message the sender knows the deployment would refuse, refused at the call instead of being numbered, sent,
/// acknowledged and silently dropped by the replicas' rules. Nothing was numbered or sent.
/// </summary>
public sealed class SendRefusedException : InvalidOperationException
{
    /// <summary>A refusal of the message for <paramref name="receiver"/>; <paramref name="limit"/> for <see cref="SendRefusal.TooLarge"/>.</summary>
    public SendRefusedException(SendRefusal reason, int sender, int receiver, string message, long limit = 0)
        : base(message)
    {
        Reason = reason;
        Sender = sender;
        Receiver = receiver;
        Limit = limit;
    }

    /// <summary>Why the message was refused.</summary>
    public SendRefusal Reason { get; }
    /// <summary>The sender that refused it.</summary>
    public int Sender { get; }
    /// <summary>The receiver the message was for.</summary>
    public int Receiver { get; }

    /// <summary>For <see cref="SendRefusal.TooLarge"/>: the most bytes of data the route admits.</summary>
    public long Limit { get; }
}
