using SieveQ.Sieve.Receiver;

namespace SieveQ.Sdk.Receiver;

/// <summary>Tunables of <see cref="SieveQReceiver"/> (the voting tunables themselves are in <see cref="Protocol"/>).</summary>
public sealed record SieveQReceiverOptions
{
    /// <summary>The post-SQ protocol's own bounds (vote tables, pending bodies).</summary>
    public PostSqOptions Protocol { get; init; } = new();

    /// <summary>Deliveries decided but not yet read by the application; when full, the receiver stops reading the replicas.</summary>
    public int DeliveryQueueCapacity { get; init; } = 1024;

    /// <summary>Replica outputs and fetched bodies waiting for the voter.</summary>
    public int InputQueueCapacity { get; init; } = 256;

    /// <summary>Commit after this many deliveries were processed (0: not by count).</summary>
    public int AutoCommitEvery { get; init; }

    /// <summary>Commit when processed deliveries are this old (zero: not by time).</summary>
    public TimeSpan AutoCommitAfter { get; init; } = TimeSpan.Zero;

    /// <summary>First wait before subscribing again to a replica-SQ whose stream ended; doubles up to <see cref="MaxReconnectDelay"/>.</summary>
    public TimeSpan ReconnectDelay { get; init; } = TimeSpan.FromMilliseconds(50);

    /// <summary>The longest wait between two attempts to subscribe to one replica-SQ.</summary>
    public TimeSpan MaxReconnectDelay { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>How long a body fetch from a replica-SQ may take before another replica is asked.</summary>
    public TimeSpan FetchTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>How long one acknowledgement call to a pre-SQ may take.</summary>
    public TimeSpan AcknowledgeTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>How often an acknowledgement no pre-SQ took is offered again.</summary>
    public TimeSpan AcknowledgeRetry { get; init; } = TimeSpan.FromSeconds(1);

    internal bool AutoCommits => AutoCommitEvery > 0 || AutoCommitAfter > TimeSpan.Zero;

    internal void Validate()
    {
        ArgumentNullException.ThrowIfNull(Protocol);
        if (DeliveryQueueCapacity < 1 || InputQueueCapacity < 1 || AutoCommitEvery < 0 || AutoCommitAfter < TimeSpan.Zero
            || ReconnectDelay <= TimeSpan.Zero || MaxReconnectDelay < ReconnectDelay || FetchTimeout <= TimeSpan.Zero
            || AcknowledgeTimeout <= TimeSpan.Zero || AcknowledgeRetry <= TimeSpan.Zero)
        {
            throw new ArgumentException("receiver options out of range");
        }
    }
}
