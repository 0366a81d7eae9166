using System.Net;
using SieveQ.Firewall.Identity;
using SieveQ.Firewall.Policy;
using SieveQ.Policy;

namespace SieveQ.Firewall.Enforcement;

/// <summary>
/// Maps the agent's effective policy (Group Policy) onto the driver's endpoint policy. Group Policy names
/// applications only (path + SHA-256), not destinations, so a whitelisted application may connect
/// anywhere; what it adds is that nothing else may, and that each application is rate-limited.
/// </summary>
public static class AgentEndpointPolicy
{
    public const string DefaultClass = "default";
    public const string AgentClass = "sieveq";

    /// <summary>Hierarchy levels the QGuard monitor switches between: all, all under a cap, the agent only.</summary>
    public const int LevelCount = 3;

    public static EndpointPolicy From(AgentPolicy policy, ulong serial, string? agentImagePath)
    {
        ArgumentNullException.ThrowIfNull(policy);
        var limits = policy.DefaultRateLimits;
        var apps = new List<Application>();
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var entry in policy.ApplicationWhitelist.IsDefault ? [] : policy.ApplicationWhitelist)
        {
            string path = NtImagePath.FromPolicyPath(entry.ImagePath);
            seen.Add(path);
            apps.Add(new Application
            {
                Path = path,
                Sha256 = entry.Sha256,
                Class = DefaultClass,
                ConnectionsPerSecond = limits.ConnectionsPerSecond,
                // A second's worth: a program that opens its connections at start-up is not refused for it.
                ConnectionBurst = limits.ConnectionsPerSecond,
                Allow = [new AllowRule { Remote = "any", Protocol = "any", Ports = "any", Direction = "both" }],
            });
        }
        if (agentImagePath is not null && seen.Add(NtImagePath.FromPolicyPath(agentImagePath)))
        {
            apps.Add(new Application
            {
                Path = NtImagePath.FromPolicyPath(agentImagePath),
                Class = AgentClass,
                Allow = AgentRules(policy),
            });
        }
        return new EndpointPolicy
        {
            Serial = serial,
            Mode = policy.DriverMode == DriverMode.Audit ? "audit" : "enforce",
            Loopback = "allow",
            // Windows resolves names for every process in the DNS client service; without this no
            // whitelisted application could resolve a name.
            Dns = "allow-client-service",
            UnknownImage = "block",
            Classes =
            [
                new TrafficClass { Name = DefaultClass, Id = 0, Weight = 1 },
                // The sieve's own traffic: what QGuard's last level still admits.
                new TrafficClass { Name = AgentClass, Id = 1, Weight = 4 },
            ],
            Applications = apps,
            Hierarchy =
            [
                new HierarchyLevel { Admit = [DefaultClass, AgentClass] },
                new HierarchyLevel { Admit = [DefaultClass, AgentClass], ConnectionsPerSecond = limits.ConnectionsPerSecond },
                // Monotonic, as the driver requires: a higher level never lifts a cap of the one below.
                new HierarchyLevel { Admit = [AgentClass], ConnectionsPerSecond = limits.ConnectionsPerSecond },
            ],
        };
    }

    /// <summary>Outbound TCP to each pre-SQ endpoint (its address when it is a literal, else any address on its port).</summary>
    private static List<AllowRule> AgentRules(AgentPolicy policy)
    {
        var rules = new List<AllowRule>();
        var endpoints = policy.PreSqEndpoints.IsDefault ? [] : policy.PreSqEndpoints;
        foreach (string text in endpoints)
        {
            if (!Uri.TryCreate(text, UriKind.Absolute, out var url))
            {
                continue; // validated by the policy loader; nothing to map
            }
            string remote = IPAddress.TryParse(url.DnsSafeHost, out var ip) ? ip.ToString() : "any";
            var rule = new AllowRule { Remote = remote, Protocol = "tcp", Ports = url.Port.ToString(System.Globalization.CultureInfo.InvariantCulture) };
            if (!rules.Contains(rule))
            {
                rules.Add(rule);
            }
        }
        if (rules.Count == 0)
        {
            // Endpoints come from enrolment, which the driver's policy cannot see yet: any TCP destination.
            rules.Add(new AllowRule { Remote = "any", Protocol = "tcp", Ports = "any" });
        }
        return rules;
    }
}
