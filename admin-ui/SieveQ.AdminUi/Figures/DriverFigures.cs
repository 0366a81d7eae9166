using SieveQ.Deployment;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Figures;

/// <summary>
/// One agent host's layer-0 driver as the agent reports it (`firewall.*` in its health, FirewallEnforcer): whether a
/// driver answers, the serial of the policy it runs (the agent numbers each policy it pushes), the mode of that
/// policy (enforce or audit, from Group Policy), its rules, the QGuard level and what it blocked. Null figures mean the
/// agent did not report them: an agent without a driver (every Linux host, or the firewall off) reports none.
/// </summary>
public sealed record DriverFigures(string Agent, ComponentStatus? Status, bool HasDriver, long? PolicySerial, string Mode, long? Rules, long? Level,
    long? Blocked, long? Allowed, long? RateLimited, long? PoliciesRejected)
{
    public static IReadOnlyList<DriverFigures> From(DeploymentConfig deployment, DeploymentSnapshot? snapshot)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        return deployment.Agents.Select(a =>
        {
            var status = snapshot?.Components.FirstOrDefault(c => c.Component == "agent" && c.Name == a.Name);
            var c = status?.Counters;
            long? Read(string name) => c is not null && c.TryGetValue(name, out var v) ? v : null;
            var hasDriver = Read("firewall.available") == 1;
            return new DriverFigures(a.Name, status, hasDriver, hasDriver ? Read("firewall.policy_serial") : null, hasDriver ? ModeWord(Read("firewall.mode")) : "-",
                hasDriver ? Read("firewall.policy_rules") : null, hasDriver ? Read("firewall.level") : null, hasDriver ? Read("firewall.blocked") : null,
                hasDriver ? Read("firewall.allowed") : null, hasDriver ? Read("firewall.rate_limited") : null, Read("firewall.policy_rejected"));
        }).ToList();
    }

    /// <summary>DriverMode as the agent reports it: 0 enforce, 1 audit, -1 before the driver accepted a policy.</summary>
    private static string ModeWord(long? mode) => mode switch
    {
        null => "not reported",
        0 => "enforce",
        1 => "audit",
        -1 => "no policy accepted yet",
        _ => $"unknown ({mode})",
    };
}
