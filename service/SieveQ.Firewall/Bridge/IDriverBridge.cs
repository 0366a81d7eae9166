namespace SieveQ.Firewall.Bridge;

/// <summary>
/// What the agent needs from layer 0: the WFP driver through DeviceIoControl on Windows,
/// the same core in-process through libsieveqfw.so elsewhere.
/// </summary>
public interface IDriverBridge : IAsyncDisposable
{
    Task<PolicyPushResult> PushPolicyAsync(ReadOnlyMemory<byte> blob, CancellationToken cancellationToken);
    Task<FirewallStatistics> GetStatisticsAsync(CancellationToken cancellationToken);
    Task SetLevelAsync(int level, CancellationToken cancellationToken);
    /// <summary>Blocked connections, new identities to hash, level and policy changes, as they happen.</summary>
    IAsyncEnumerable<FirewallEvent> ReadEventsAsync(CancellationToken cancellationToken);
    /// <summary>The agent's answer to a NEW_IDENTITY event: this process's image hashes to sha256.</summary>
    Task AttestAsync(ulong processKey, ReadOnlyMemory<byte> sha256, CancellationToken cancellationToken);
    Task BindServiceAsync(ulong processKey, string serviceName, CancellationToken cancellationToken);
    /// <summary>Which rule decides a connection, without charging any bucket.</summary>
    Task<FirewallDecision> ExplainAsync(ConnectionQuery query, CancellationToken cancellationToken);
    /// <summary>
    /// Stores (or removes) the driver's boot-time filters in BFE, which enforces them from the next boot until BFE
    /// has started; they outlive the agent and the driver. A change that did not happen is a result, not an exception.
    /// </summary>
    Task<BootFiltersResult> SetBootFiltersAsync(bool enabled, CancellationToken cancellationToken);
}
