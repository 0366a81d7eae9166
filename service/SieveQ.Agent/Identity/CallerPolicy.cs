using SieveQ.Deployment;
using SieveQ.Transport;

namespace SieveQ.Agent.Identity;

/// <summary>
/// Who may use the agent, and as which identities. On a Unix socket: callers running as the agent's own user or a
/// user listed in the deployment's <see cref="AgentEntry.AllowedUids"/>. On the Windows named pipe: callers whose
/// user SID is the agent's own, LocalSystem (<see cref="WindowsSid.LocalSystem"/>), or listed in
/// <see cref="AgentEntry.AllowedSids"/>. A caller the OS did not identify is refused everywhere. Then, senders and
/// receivers this agent hosts. Refusals are PermissionDenied and name the caller, so an operator can tell who tried.
/// </summary>
internal sealed class CallerPolicy
{
    private readonly AgentEntry _entry;
    private readonly int? _ownUid;
    private readonly HashSet<string> _allowedSids = new(StringComparer.Ordinal);

    /// <param name="entry">The agent's deployment entry (its allow-lists, already validated at load).</param>
    /// <param name="ownUid">The agent's effective uid (Linux); null where there is none.</param>
    /// <param name="ownSid">The agent's user SID (Windows); null where there is none.</param>
    public CallerPolicy(AgentEntry entry, int? ownUid, string? ownSid)
    {
        ArgumentNullException.ThrowIfNull(entry);
        _entry = entry;
        _ownUid = ownUid;
        _allowedSids.Add(WindowsSid.LocalSystem);
        foreach (var sid in (ownSid is null ? [] : new[] { ownSid }).Concat(entry.AllowedSids))
        {
            // Validated when the deployment was loaded; a SID that is not one matches no caller.
            if (WindowsSid.TryCanonicalize(sid, out var canonical))
            {
                _allowedSids.Add(canonical);
            }
        }
    }

    /// <summary>Refuses a caller of unknown identity, and one whose user is not allowed.</summary>
    public void EnsureAllowed(PeerCredentials? caller)
    {
        if (caller is null)
        {
            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, $"caller identity unknown; agent '{_entry.Name}' serves only identified callers");
        }
        if (caller.UserSid is not null)
        {
            if (!WindowsSid.TryCanonicalize(caller.UserSid, out var sid) || !_allowedSids.Contains(sid))
            {
                throw new GrpcCallException(GrpcStatusCode.PermissionDenied, $"user {caller.UserSid} may not use agent '{_entry.Name}' (caller {caller})");
            }
            return;
        }
        if (caller.Uid != _ownUid && !_entry.AllowedUids.Contains(caller.Uid))
        {
            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, $"user {caller.Uid} may not use agent '{_entry.Name}' (caller {caller})");
        }
    }

    /// <summary>Null when allowed, else the refusal text.</summary>
    public string? RefuseSender(int sender, PeerCredentials? caller) =>
        _entry.Senders.Contains(sender) ? null : $"agent '{_entry.Name}' does not host sender {sender} (caller {Describe(caller)})";

    public string? RefuseReceiver(int receiver, PeerCredentials? caller) =>
        _entry.Receivers.Contains(receiver) ? null : $"agent '{_entry.Name}' does not host receiver {receiver} (caller {Describe(caller)})";

    private static string Describe(PeerCredentials? caller) => caller?.ToString() ?? "unidentified";
}
