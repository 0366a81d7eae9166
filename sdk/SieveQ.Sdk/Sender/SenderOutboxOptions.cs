namespace SieveQ.Sdk.Sender;

/// <summary>
/// The durable outbox (<c>stateDir/sender-N.outbox</c>): every message SendAsync accepted is on disk before it
/// returns and stays there until f+1 replica-SQs acknowledge it, so a restarted sender sends it again with its own
/// number and the deployment delivers it exactly once.
/// </summary>
public sealed record SenderOutboxOptions
{
    /// <summary>
    /// Off, a message accepted but not acknowledged when the process stops is lost (the pre-outbox behaviour, for
    /// benchmarks that measure the sieve without the sender's fsync).
    /// </summary>
    public bool Enabled { get; init; } = true;

    /// <summary>Bytes of pending records at which SendAsync stops accepting (waits, then <see cref="SieveQUnavailableException"/> with <c>OutboxFull</c>).</summary>
    public long MaxBytes { get; init; } = 64L << 20;

    /// <summary>Pending messages at which SendAsync stops accepting. The outstanding window (<c>Protocol.MaxOutstanding</c>) is usually lower and binds first.</summary>
    public int MaxMessages { get; init; } = 8192;

    internal bool IsValid => MaxBytes >= 1 && MaxMessages >= 1;
}
