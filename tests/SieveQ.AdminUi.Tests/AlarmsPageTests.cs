using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Components.Shared;
using SieveQ.AdminUi.Figures;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>The alarms page and the navigation's count, from a real controller's Status and audit log.</summary>
public sealed class AlarmsPageTests : ConsoleTestContext
{
    private async Task<AlarmBook> RefreshAsync()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var book = Services.GetRequiredService<AlarmBook>();
        await book.RefreshAsync(CancellationToken.None);
        return book;
    }

    private static ComponentHealth Replica(int id, long lastDecided, long rules, long quarantinedSenders) =>
        new("replica-sq", $"replica-sq-{id}", $"http://127.0.0.1:{10 + id}", true, true, "ok", new Dictionary<string, long>
        {
            ["last_decided"] = lastDecided, ["rules.active_version"] = rules, ["quarantined.senders"] = quarantinedSenders, ["quarantined.pre_sq.4"] = 0,
        });

    [Fact]
    public async Task A_down_component_a_pre_sq_quarantined_by_f_plus_1_replicas_and_a_recorded_replica_notice_are_alarms()
    {
        // The record ReplicaNoticeTally appends at f+1 (the tally itself is tested in the controller's tests).
        await Controller.Host.Audit.AppendAsync("f+1 replicas [0, 1]", "replica-notice add-pre-sq", "pre-sq 4 (decided at agreed time 1764000000000)",
            "recorded: f+1 replicas report overload; no orchestrator carries it out yet", CancellationToken.None);
        await RefreshAsync();
        var page = Render<Alarms>();
        var rows = page.FindAll("[data-testid=alarms] tbody tr");
        Assert.Equal(3, rows.Count);
        Assert.Contains("pre-sq pre-sq-4 is DOWN: connection refused", page.Find("[data-testid='alarm-component/pre-sq/pre-sq-4']").TextContent, StringComparison.Ordinal);
        Assert.Contains("pre-SQ 4 quarantined (2 replicas say so)", page.Find("[data-testid='alarm-quarantine/pre-sq/4']").TextContent, StringComparison.Ordinal);
        var notice = page.FindAll("tr").Single(r => r.GetAttribute("data-testid")?.StartsWith("alarm-notice/", StringComparison.Ordinal) == true).TextContent;
        Assert.Contains("add-pre-sq: pre-sq 4 (decided at agreed time 1764000000000)", notice, StringComparison.Ordinal);
        // Pre-SQ 5: one replica of two says quarantined, not f+1: no alarm.
        Assert.Empty(page.FindAll("[data-testid='alarm-quarantine/pre-sq/5']"));
    }

    [Fact]
    public async Task Lag_a_rule_set_split_quarantined_senders_and_an_unhealthy_agent_are_alarms_that_keep_their_time_and_go_when_resolved()
    {
        Controller.Health =
        [
            Replica(0, 1000, 3, 2), Replica(1, 1000, 4, 2), Replica(2, 900, 3, 0),
            new("agent", "agent", "unix:/x", true, false, "firewall: no driver answers", new Dictionary<string, long>()),
        ];
        var book = await RefreshAsync();
        var page = Render<Alarms>();
        Assert.Contains("replica-sq-2 is 100 decided instances behind", page.Find("[data-testid='alarm-lag/replica-sq-2']").TextContent, StringComparison.Ordinal);
        Assert.Contains("version 3 at replica-sq-0, replica-sq-2, version 4 at replica-sq-1", page.Find("[data-testid=alarm-rule-set-split]").TextContent, StringComparison.Ordinal);
        // Two of three replicas report 2 quarantined senders: f+1 agree.
        Assert.Contains("2 sender(s) quarantined", page.Find("[data-testid='alarm-quarantine/senders']").TextContent, StringComparison.Ordinal);
        Assert.Contains("agent agent is UNHEALTHY: firewall: no driver answers", page.Find("[data-testid='alarm-component/agent/agent']").TextContent, StringComparison.Ordinal);
        var since = book.Open.Single(a => a.Key == "rule-set-split").Since;

        await RefreshAsync();
        Assert.Equal(since, book.Open.Single(a => a.Key == "rule-set-split").Since);

        Controller.Health = [Replica(0, 1000, 4, 0), Replica(1, 1000, 4, 0), Replica(2, 990, 4, 0)];
        await RefreshAsync();
        page.WaitForAssertion(() => Assert.Equal("Nothing to act on.", page.Find("[data-testid=no-alarms]").TextContent.Trim()));
        Assert.Empty(book.Open);
    }

    [Fact]
    public async Task The_navigation_shows_how_many_alarms_are_open_and_follows_the_book()
    {
        await RefreshAsync();
        var link = Render<AlarmsNavLink>();
        Assert.Equal("2", link.Find("[data-testid=alarm-count]").TextContent.Trim());
        Controller.Health = [Replica(0, 10, 1, 0), Replica(1, 10, 1, 0)];
        await RefreshAsync();
        link.WaitForAssertion(() => Assert.Empty(link.FindAll("[data-testid=alarm-count]")));
    }

    [Fact]
    public void At_most_the_bound_are_kept_the_oldest_dropped_and_counted_once()
    {
        var book = Services.GetRequiredService<AlarmBook>();
        var start = DateTimeOffset.UnixEpoch.AddDays(20000);
        var alarms = Enumerable.Range(0, AlarmBook.MaxAlarms + 50).Select(i => new Alarm($"component/agent/a{i}", "DOWN", $"agent a{i} is DOWN", start.AddSeconds(i))).ToList();
        book.Record(alarms);
        Assert.Equal(AlarmBook.MaxAlarms, book.Open.Count);
        Assert.Equal(50, book.DroppedTotal);
        // Newest first; the 50 oldest are the ones dropped.
        Assert.Equal($"component/agent/a{AlarmBook.MaxAlarms + 49}", book.Open[0].Key);
        Assert.DoesNotContain(book.Open, a => a.Key == "component/agent/a49");
        // The same conditions at the next refresh, seen later: the dropped stay dropped and are not counted again.
        book.Record(alarms.Select(a => a with { Since = start.AddDays(1) }).ToList());
        Assert.Equal(50, book.DroppedTotal);
        Assert.Equal(start.AddSeconds(50), book.Open[^1].Since);
    }
}
