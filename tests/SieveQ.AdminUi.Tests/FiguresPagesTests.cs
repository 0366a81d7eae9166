using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Figures;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>The overview's verdict latency and the replicas page's checkpoint and lag, from a real controller's Status.</summary>
public sealed class FiguresPagesTests : ConsoleTestContext
{
    private static ComponentHealth Replica(int id, long lastDecided, long checkpoint, bool reachable = true) =>
        new("replica-sq", $"replica-sq-{id}", $"http://127.0.0.1:{10 + id}", reachable, reachable, reachable ? "ok" : "connection refused",
            reachable ? new Dictionary<string, long> { ["regency"] = 2, ["last_decided"] = lastDecided, ["checkpoint"] = checkpoint, ["decided"] = lastDecided } : []);

    [Fact]
    public async Task The_overview_shows_the_slowest_senders_verdict_latency_beside_the_delivered_rate()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Overview>();
        // Sender 2 has the highest p99 of the senders with samples; sender 3's stale p99 has no samples in the window.
        Assert.Equal("p50 3.1 ms / p99 14.2 ms", page.Find("[data-testid=verdict-latency]").TextContent.Trim());
        Assert.Contains("slowest sender 2, 80 messages", page.Find("[data-testid=verdict-latency-detail]").TextContent, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_overview_says_when_no_verdict_was_timed_in_the_last_minute()
    {
        Controller.Health = [new("agent", "agent", "unix:/x", true, true, "ok", new Dictionary<string, long> { ["sender.1.verdict_latency_samples"] = 0, ["sender.1.verdict_latency_p99_us"] = 5000 })];
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Overview>();
        Assert.Equal("no verdicts in the last minute", page.Find("[data-testid=verdict-latency]").TextContent.Trim());
    }

    [Fact]
    public async Task The_replicas_page_shows_checkpoints_and_flags_a_replica_behind_by_more_than_the_bound()
    {
        Controller.Health = [Replica(0, 1000, 960), Replica(1, 990, 960), Replica(2, 1000 - ReplicaFigures.LagBound - 1, 896), Replica(3, 0, 0, reachable: false)];
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Replicas>();
        Assert.Contains("960", page.Find("[data-testid=replica-replica-sq-0]").TextContent, StringComparison.Ordinal);
        Assert.Equal("0", page.Find("[data-testid=replica-replica-sq-0] [data-testid=lag]").TextContent.Trim());
        Assert.Equal("10", page.Find("[data-testid=replica-replica-sq-1] [data-testid=lag]").TextContent.Trim());
        Assert.Equal("LAGGING 65", page.Find("[data-testid=replica-replica-sq-2] [data-testid=lag]").TextContent.Trim());
        Assert.Equal("unknown", page.Find("[data-testid=replica-replica-sq-3] [data-testid=lag]").TextContent.Trim());
        var flagged = Assert.Single(page.FindAll("[data-testid=lagging]"));
        Assert.Contains("replica-sq-2 is 65 behind", flagged.TextContent, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_replica_exactly_at_the_bound_is_not_flagged()
    {
        Controller.Health = [Replica(0, 500, 448), Replica(1, 500 - ReplicaFigures.LagBound, 384)];
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Replicas>();
        Assert.Empty(page.FindAll("[data-testid=lagging]"));
        Assert.Equal("64", page.Find("[data-testid=replica-replica-sq-1] [data-testid=lag]").TextContent.Trim());
    }
}
