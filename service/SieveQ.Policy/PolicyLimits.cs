namespace SieveQ.Policy;

/// <summary>
/// Bounds on everything a policy source may hand the agent. A policy is read on a privileged service;
/// nothing in it may make that service allocate or loop without limit, whoever wrote it.
/// </summary>
public static class PolicyLimits
{
    /// <summary>Large enough for a full whitelist with long paths, small enough to read in one go.</summary>
    public const int MaxFileBytes = 1024 * 1024;

    public const int MaxPreSqEndpoints = 64;
    public const int MaxWhitelistEntries = 1024;

    public const int MaxUrlLength = 2048;
    public const int MaxEnrolmentIdLength = 256;
    public const int MaxRuleSetLocationLength = 2048;
    /// <summary>Base64 characters; an RSA-4096 SubjectPublicKeyInfo needs 736.</summary>
    public const int MaxSignerLength = 2048;
    /// <summary>NT device paths may exceed MAX_PATH; 4096 covers them without inviting megabyte names.</summary>
    public const int MaxImagePathLength = 4096;

    public const uint MaxMessagesPerSecond = 1_000_000;
    public const uint MaxMessageBurst = 10_000_000;
    public const uint MaxConnectionsPerSecond = 100_000;

    // Bounds of the raw registry-shaped tree, checked before the layout is interpreted. They sit above the
    // semantic limits so that an over-long list is reported as such rather than as a malformed key.
    public const int MaxValuesPerKey = 2 * MaxWhitelistEntries;
    public const int MaxSubkeysPerKey = 16;
    public const int MaxKeyDepth = 3;
    /// <summary>The registry's own limit on a value name.</summary>
    public const int MaxValueNameLength = 16383;
    /// <summary>The registry's own limit on a key name.</summary>
    public const int MaxKeyNameLength = 255;
    public const int MaxStringValueLength = 16384;
}
