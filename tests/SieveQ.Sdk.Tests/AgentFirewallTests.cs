using SieveQ.Agent.Hosting;
using SieveQ.Firewall.Enforcement;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
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
            Systemd = new SystemdNotifier(null),
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
