namespace SieveQ.Policy;

/// <summary>
/// What a source read at one moment: the raw key, or why it could not be read. The fingerprint identifies
/// the content even when it is broken, so a broken policy that stays broken raises its alarm once.
/// </summary>
public sealed record PolicySnapshot
{
    private PolicySnapshot(string source, string fingerprint, PolicyKey? root, string? error)
    {
        Source = source;
        Fingerprint = fingerprint;
        Root = root;
        Error = error;
    }

    /// <summary>The fingerprint of "nothing configured", the same for every source.</summary>
    public const string NotConfiguredFingerprint = "not-configured";

    public string Source { get; }

    public string Fingerprint { get; }

    /// <summary>The key as read; <see cref="PolicyKey.Empty"/> when no policy is configured.</summary>
    public PolicyKey? Root { get; }

    public string? Error { get; }

    public static PolicySnapshot Read(string source, PolicyKey root, string fingerprint) => new(source, fingerprint, root, null);

    /// <summary>No key, no file: nothing is configured, which is a valid state (Group Policy removed).</summary>
    public static PolicySnapshot NotConfigured(string source) => new(source, NotConfiguredFingerprint, PolicyKey.Empty, null);

    public static PolicySnapshot Failed(string source, string error, string fingerprint) => new(source, fingerprint, null, error);
}
