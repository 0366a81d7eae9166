using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Figures;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>The driver fleet page from the agents' `firewall.*` health, through a real controller's Status.</summary>
public sealed class DriverFleetPageTests : ConsoleTestContext
{
    private static string Compact(string text) => string.Concat(text.Where(c => !char.IsWhiteSpace(c)));

    [Fact]
    public async Task A_host_with_a_driver_shows_its_policy_mode_level_and_blocks_and_one_without_says_no_driver()
    {
        Services.AddSingleton(new DeploymentConfig
        {
            F = 1,
            Replicas = [],
            PreSqs = [],
            Agents = [new AgentEntry { Name = "win-host", Socket = "a.sock" }, new AgentEntry { Name = "linux-host", Socket = "b.sock" }, new AgentEntry { Name = "fw-off", Socket = "c.sock" }],
            BaseDirectory = Controller.Directory,
        });
        Controller.Health =
        [
            new("agent", "win-host", "unix:/a", true, true, "ok", new Dictionary<string, long>
            {
                ["firewall.available"] = 1, ["firewall.policy_serial"] = 7, ["firewall.mode"] = 1, ["firewall.policy_rules"] = 12, ["firewall.level"] = 2,
                ["firewall.blocked"] = 1234, ["firewall.allowed"] = 99, ["firewall.rate_limited"] = 5, ["firewall.policy_rejected"] = 1,
            }),
            // The agent's enforcer without a driver reports only that (and its zero counts).
            new("agent", "linux-host", "unix:/b", true, true, "ok", new Dictionary<string, long> { ["firewall.available"] = 0, ["firewall.policy_rejected"] = 0 }),
            new("agent", "fw-off", "unix:/c", true, true, "ok", new Dictionary<string, long> { ["receiver.100.delivered"] = 3 }),
        ];
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<DriverFleet>();
        Assert.Equal("win-hosthealthypresent7audit1221,2349951", Compact(page.Find("[data-testid=driver-win-host]").TextContent));
        Assert.Equal("no driver", page.Find("[data-testid=driver-linux-host] [data-testid=driver]").TextContent.Trim());
        Assert.Equal("-", page.Find("[data-testid=driver-linux-host] [data-testid=level]").TextContent.Trim());
        Assert.Equal("no driver", page.Find("[data-testid=driver-fw-off] [data-testid=driver]").TextContent.Trim());
    }

    [Fact]
    public async Task The_mode_reads_enforce_and_a_driver_that_took_no_policy_yet_says_so()
    {
        Controller.Health =
        [
            new("agent", "agent", "unix:/x", true, true, "ok", new Dictionary<string, long> { ["firewall.available"] = 1, ["firewall.mode"] = 0, ["firewall.level"] = 0 }),
        ];
        var figures = Services.GetRequiredService<LiveFigures>();
        await figures.PollOnceAsync(CancellationToken.None);
        var page = Render<DriverFleet>();
        Assert.Equal("enforce", page.Find("[data-testid=driver-agent] [data-testid=mode]").TextContent.Trim());
        Controller.Health = [new("agent", "agent", "unix:/x", true, true, "ok", new Dictionary<string, long> { ["firewall.available"] = 1, ["firewall.mode"] = -1 })];
        await figures.PollOnceAsync(CancellationToken.None);
        page.WaitForAssertion(() => Assert.Equal("no policy accepted yet", page.Find("[data-testid=driver-agent] [data-testid=mode]").TextContent.Trim()));
    }
}
