using SieveQ.Deployment;

namespace SieveQ.AdminUi.Figures;

/// <summary>One replica's rule-set line: what its health reply says it runs (null when it does not report rules).</summary>
public sealed record ReplicaRuleSet(string Replica, bool Reachable, long? Active, long? Previous, long? LastNonce, long? Applied, long? Refused);

/// <summary>An agent's last published rule set (Group Policy's rule-set location), as its health reply reports it.</summary>
public sealed record AgentRuleSet(string Agent, string Status, long Version);

/// <summary>
/// The rule sets as the replicas report them, and the version f+1 of them agree on (the one the sieve runs, as
/// `sieveq rules push` reads it). The replicas' health replies carry versions, not digests, so the console shows none.
/// </summary>
public sealed record RuleSetFigures(IReadOnlyList<ReplicaRuleSet> Replicas, long? AgreedVersion, int Agreeing, IReadOnlyList<AgentRuleSet> Agents)
{
    public static RuleSetFigures From(DeploymentConfig deployment, DeploymentSnapshot snapshot)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        ArgumentNullException.ThrowIfNull(snapshot);
        static long? Read(IDictionary<string, long> c, string name) => c.TryGetValue(name, out var v) ? v : null;
        var replicas = snapshot.Components.Where(c => c.Component == "replica-sq").Select(c => new ReplicaRuleSet(c.Name, c.Reachable,
            Read(c.Counters, "rules.active_version"), Read(c.Counters, "rules.previous_version"), Read(c.Counters, "rules.last_nonce"),
            Read(c.Counters, "rules.commands_applied"), Read(c.Counters, "rules.commands_refused"))).ToList();
        var agreed = replicas.Where(r => r.Active is not null).GroupBy(r => r.Active).OrderByDescending(g => g.Count()).FirstOrDefault();
        var agents = snapshot.Components.Where(c => c.Component == "agent" && c.Counters.ContainsKey("ruleset.published.status"))
            .Select(c => new AgentRuleSet(c.Name, StatusWord(c.Counters["ruleset.published.status"]), c.Counters.GetValueOrDefault("ruleset.published.version"))).ToList();
        return new RuleSetFigures(replicas, agreed is not null && agreed.Count() >= deployment.F + 1 ? agreed.Key : null, agreed?.Count() ?? 0, agents);
    }

    private static string StatusWord(long status) =>
        Enum.IsDefined(typeof(PublishedRuleSetStatus), (int)status) ? ((PublishedRuleSetStatus)(int)status).ToString() : $"unknown ({status})";
}
