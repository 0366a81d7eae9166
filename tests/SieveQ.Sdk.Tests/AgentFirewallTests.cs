using SieveQ.Policy.Hosting;
using System.Security.Cryptography;
using System.Text;
using SieveQ.Agent.Hosting;
using SieveQ.Deployment;
using SieveQ.Firewall.Enforcement;
using SieveQ.Policy;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Rules;
using SieveQ.Rules.Signing;
using SieveQ.Sdk.Tests.Fakes;
using SieveQ.Transport;
using SieveQ.Tests.Shared;

namespace SieveQ.Sdk.Tests;

/// <summary>The agent with its optional firewall: counters in Health, with and without the core library.</summary>
public sealed class AgentFirewallTests
{
    private static async Task<HealthReply> HealthWithFirewallAsync(SieveWorld world, string library)
    {
        await using var agent = await AgentHost.StartAsync(world.Context, "agent", world.StateDir("agent"), options: new AgentHostOptions
        {
            Endpoint = Path.Combine(world.Directory, "fw.sock"),
            Firewall = new FirewallOptions { CoreLibraryPath = library },
        });
        using var channel = GrpcChannel.ForUnixSocket(agent.Endpoint);
        return await channel.UnaryAsync(ProtocolNames.AgentService, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser);
    }

    [Fact]
    public async Task Health_shows_the_pushed_policy_when_the_core_library_is_there()
    {
        await using var world = await SieveWorld.StartAsync();
        var health = await HealthWithFirewallAsync(world, DriverLibrary.LibraryPath);
        Assert.Equal(1, health.Counters["firewall.available"]);
        Assert.Equal(1, health.Counters["firewall.policy_pushes"]);
        Assert.Equal(1, health.Counters["firewall.policy_serial"]);
        // the not-configured policy still gives the agent its own rule to reach the sieve
        Assert.Equal(1, health.Counters["firewall.policy_rules"]);
    }

    [Fact]
    public async Task Without_the_core_library_the_agent_runs_and_health_says_no_firewall()
    {
        await using var world = await SieveWorld.StartAsync();
        var health = await HealthWithFirewallAsync(world, Path.Combine(world.Directory, "missing", "libsieveqfw.so"));
        Assert.Equal(0, health.Counters["firewall.available"]);
        Assert.False(health.Counters.ContainsKey("firewall.policy_serial"));
    }

}

/// <summary>The agent follows the rule-set location of its policy and reports what became of it in Health.</summary>
public sealed class AgentRuleSetPolicyTests
{
    private static async Task WriteSignedAsync(string file, int version, ECDsa signer)
    {
        var json = Encoding.UTF8.GetBytes($$"""
            { "schema": "sieveq-ruleset/v1", "version": {{version}}, "name": "open",
              "rules": [{ "name": "open", "action": "allow", "from": "any", "to": "any" }] }
            """);
        await File.WriteAllBytesAsync(file, json);
        var canonical = RuleSetLoader.CompileUnsigned(json).Document.CanonicalBytes;
        await File.WriteAllBytesAsync(file + SignatureSidecar.Extension, RuleSetSigner.Sign(canonical, signer).ToJson());
    }

    private static async Task<HealthReply> WaitForVersionAsync(string endpoint, int version)
    {
        using var channel = GrpcChannel.ForUnixSocket(endpoint);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (true)
        {
            var health = await channel.UnaryAsync(ProtocolNames.AgentService, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser);
            if (health.Counters.GetValueOrDefault("ruleset.published.version") == version || DateTime.UtcNow > deadline)
            {
                return health;
            }
            await Task.Delay(50);
        }
    }

    [Fact]
    public async Task The_policys_rule_set_location_is_checked_at_start_and_again_when_the_policy_changes()
    {
        await using var world = await SieveWorld.StartAsync();
        using var admin = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var good = Path.Combine(world.Directory, "good.json");
        var forged = Path.Combine(world.Directory, "forged.json");
        await WriteSignedAsync(good, 2, admin);
        await WriteSignedAsync(forged, 3, intruder);
        var policyFile = Path.Combine(world.Directory, "policy.json");
        void PointAt(string location) => File.WriteAllText(policyFile, JsonPolicyMirror.Write(PolicyLayout.ToKey(
            AgentPolicy.NotConfigured with { RuleSet = new RuleSetReference(location, SignerKey.Of(admin).SpkiBase64) })));
        PointAt(good);

        using var source = new JsonFilePolicySource(policyFile);
        using var policy = new PolicyMonitor(source, settleDelay: TimeSpan.FromMilliseconds(20));
        policy.Start();
        await using var agent = await AgentHost.StartAsync(world.Context, "agent", world.StateDir("agent"), options: new AgentHostOptions
        {
            Endpoint = Path.Combine(world.Directory, "rs.sock"),
            Policy = policy,
        });

        // The fake sieve takes no rule-set commands, so the verified document stays unsent and is retried.
        var first = await WaitForVersionAsync(agent.Endpoint, 2);
        Assert.Equal(2, first.Counters["ruleset.published.version"]);
        Assert.Equal((long)PublishedRuleSetStatus.Unreachable, first.Counters["ruleset.published.status"]);

        // A policy edit pointing at a document the pinned signer did not sign: followed, and refused before sending.
        PointAt(forged);
        using var channel = GrpcChannel.ForUnixSocket(agent.Endpoint);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        HealthReply health;
        do
        {
            await Task.Delay(50);
            health = await channel.UnaryAsync(ProtocolNames.AgentService, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser);
        }
        while (health.Counters["ruleset.published.status"] != (long)PublishedRuleSetStatus.Refused && DateTime.UtcNow < deadline);
        Assert.Equal((long)PublishedRuleSetStatus.Refused, health.Counters["ruleset.published.status"]);
        Assert.Contains("forged.json refused", health.Detail, StringComparison.Ordinal);
    }
}
