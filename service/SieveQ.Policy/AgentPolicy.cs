using System.Collections.Immutable;

namespace SieveQ.Policy;

/// <summary>
/// The agent's settings as Group Policy (or its JSON mirror) delivers them. Immutable, so the monitor can
/// hand out one instance to every reader and swap the whole of it at once.
/// </summary>
public sealed partial record AgentPolicy
{
    /// <summary>What applies when no policy is configured at all.</summary>
    public static AgentPolicy NotConfigured { get; } = new();

    /// <summary>Absolute http(s) URLs of the pre-SQ gateways; empty means "use the ones from enrolment".</summary>
    public ImmutableArray<string> PreSqEndpoints { get; init; } = [];

    public EnrolmentSettings? Enrolment { get; init; }

    public RuleSetReference? RuleSet { get; init; }

    public DriverMode DriverMode { get; init; } = DriverMode.Enforce;

    public RateLimits DefaultRateLimits { get; init; } = RateLimits.Default;

    public ImmutableArray<WhitelistEntry> ApplicationWhitelist { get; init; } = [];

    /// <summary>
    /// Whether the WFP driver keeps its boot-time filters in BFE: a block at the ALE connect and accept layers,
    /// with permits for loopback, DHCP/DHCPv6, DNS and ICMPv6 ND/MLD, enforced from boot until BFE has started.
    /// They outlive the agent; only turning this off (or uninstalling) removes them.
    /// </summary>
    public bool BootTimeFilters { get; init; }

    // ImmutableArray compares by reference; a policy read twice from the same content must compare equal.
    public bool Equals(AgentPolicy? other) =>
        other is not null
        && Enrolment == other.Enrolment
        && RuleSet == other.RuleSet
        && DriverMode == other.DriverMode
        && DefaultRateLimits == other.DefaultRateLimits
        && BootTimeFilters == other.BootTimeFilters
        && Same(PreSqEndpoints, other.PreSqEndpoints)
        && Same(ApplicationWhitelist, other.ApplicationWhitelist);

    public override int GetHashCode() =>
        HashCode.Combine(Enrolment, RuleSet, DriverMode, DefaultRateLimits, BootTimeFilters, Length(PreSqEndpoints), Length(ApplicationWhitelist));

    private static bool Same<T>(ImmutableArray<T> a, ImmutableArray<T> b) =>
        a.IsDefault || b.IsDefault ? a.IsDefault == b.IsDefault : a.AsSpan().SequenceEqual(b.AsSpan());

    private static int Length<T>(ImmutableArray<T> a) => a.IsDefault ? -1 : a.Length;
}

public enum DriverMode
{
    Enforce,
    Audit,
}

public enum KeyStorageProvider
{
    /// <summary>Microsoft Platform Crypto Provider: the key never leaves the TPM.</summary>
    Tpm,
    /// <summary>Microsoft Software Key Storage Provider (PEM with owner-only permissions off Windows).</summary>
    Software,
}

public sealed record EnrolmentSettings(string ControllerUrl, string EnrolmentId, KeyStorageProvider KeyStorage = KeyStorageProvider.Tpm);

/// <summary>Where the signed rule set lives and the administrator key it must be signed with.</summary>
/// <param name="Location">Fully qualified path, UNC path or https URL.</param>
/// <param name="SignerSpki">Base64 of the DER SubjectPublicKeyInfo of the pinned signer.</param>
public sealed record RuleSetReference(string Location, string SignerSpki);

public sealed record RateLimits(uint MessagesPerSecond, uint MessageBurst, uint ConnectionsPerSecond)
{
    /// <summary>Must match the decimalTextBox defaults in installer/policy/en-US/SieveQ.adml.</summary>
    public static RateLimits Default { get; } = new(10_000, 20_000, 200);
}

/// <summary>An application the driver lets through: both the image path and its hash must match.</summary>
public sealed record WhitelistEntry(string ImagePath, string Sha256);
