using SieveQ.Deployment;
using SieveQ.Transport;

namespace SieveQ.Agent.Identity;

/// <summary>
/// Who may use the agent, and as which identities: callers running as the agent's own user or a user
/// listed in the deployment's <see cref="AgentEntry.AllowedUids"/>; senders and receivers this agent
/// hosts. Refusals are PermissionDenied and name the caller, so an operator can tell who tried.
/// </summary>
internal sealed class CallerPolicy
{
    private readonly AgentEntry _entry;
    private readonly int? _ownUid;

    public CallerPolicy(AgentEntry entry, int? ownUid)
    {
        _entry = entry;
        _ownUid = ownUid;
    }

    /// <summary>Refuses a caller whose user is not allowed; a caller of unknown identity only where the OS gives none (Windows).</summary>
    public void EnsureAllowed(PeerCredentials? caller)
    {
        if (caller is null)
        {
            if (OperatingSystem.IsLinux())
            {
                throw new GrpcCallException(GrpcStatusCode.PermissionDenied, "caller identity unknown");
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
