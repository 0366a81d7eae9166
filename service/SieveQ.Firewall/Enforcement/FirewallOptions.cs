using SieveQ.Firewall.QGuard;

namespace SieveQ.Firewall.Enforcement;

/// <summary>How the agent runs layer 0. Absent from the agent's options means: no firewall at all.</summary>
public sealed record FirewallOptions
{
    /// <summary>libsieveqfw.so to host the core in-process off Windows; by default $SIEVEQ_FW_LIBRARY or driver/build in a checkout.</summary>
    public string? CoreLibraryPath { get; init; }

    /// <summary>
    /// The agent's own image, given its own identity (class "sieveq", outbound TCP to the pre-SQ endpoints)
    /// so a whitelist cannot lock the agent out of the sieve. Null: do not add it.
    /// </summary>
    public string? AgentImagePath { get; init; } = Environment.ProcessPath;

    public QGuardSettings QGuard { get; init; } = new();

    /// <summary>Bound on NEW_IDENTITY events waiting for a hash; past it the driver's pend time-out answers.</summary>
    public int MaxQueuedAttestations { get; init; } = 256;

    /// <summary>How often the counters shown in Health are refreshed from the driver.</summary>
    public TimeSpan StatisticsInterval { get; init; } = TimeSpan.FromSeconds(1);
}
