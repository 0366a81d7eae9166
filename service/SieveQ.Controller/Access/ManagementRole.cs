namespace SieveQ.Controller.Access;

/// <summary>What a management caller may do; each role includes the ones below it.</summary>
public enum ManagementRole
{
    /// <summary>
    /// A replica-SQ: may only report its notices (ReplicaNotice), nothing else, not even reads; below every other role
    /// so that no role check lets it through.
    /// </summary>
    Replica = 0,

    /// <summary>Reads: status, audit log.</summary>
    Viewer = 1,

    /// <summary>Day-to-day changes: quarantine and readmit senders.</summary>
    Operator = 2,

    /// <summary>Everything, including (later) enrolment and the controller's own configuration.</summary>
    Administrator = 3,
}

/// <summary>One pinned caller: a name for people, a role, and the public key that proves it is them.</summary>
public sealed record PinnedCaller(string Name, ManagementRole Role, byte[] PublicKeySpki, int? ReplicaId = null)
{
    public string KeyId => ManagementSignature.KeyIdOf(PublicKeySpki);
}

/// <summary>
/// A caller the controller authenticated: how it appears in the audit log, with the network address its call came
/// from (<see cref="Audit.AuditAddress"/>) when the call had one.
/// </summary>
public sealed record CallerIdentity(string KeyId, string Name, ManagementRole Role, int? ReplicaId = null, string? From = null)
{
    public string AuditActor => From is null
        ? $"key {KeyId} ({Name}, {Role.ToString().ToLowerInvariant()})"
        : $"key {KeyId} ({Name}, {Role.ToString().ToLowerInvariant()}) from {From}";
}
