using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Components.Shared;
using SieveQ.AdminUi.Figures;
using Microsoft.Extensions.DependencyInjection;

namespace SieveQ.AdminUi.Tests;

public sealed class ComponentTests : ConsoleTestContext
{
    [Theory]
    [InlineData(true, true, "healthy")]
    [InlineData(false, true, "UNHEALTHY")]
    [InlineData(false, false, "DOWN")]
    public void A_health_chip_says_what_sieveq_status_says(bool healthy, bool reachable, string word)
    {
        var chip = Render<HealthChip>(p => p.Add(c => c.Healthy, healthy).Add(c => c.Reachable, reachable));
        Assert.Equal(word, chip.Find(".mud-chip-content").TextContent.Trim());
    }

    [Fact]
    public async Task A_viewer_who_clicks_quarantine_is_refused_on_the_server_and_nothing_reaches_the_audit_log()
    {
        var before = Controller.Host.Audit.LastSequence;
        var page = Render<Senders>(p => p.AddCascadingValue(SignedIn("vera", ConsoleRole.Viewer)));
        await page.Find("button[aria-label='Quarantine sender 1']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("refused", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task An_operator_quarantine_is_audited_by_the_controller_with_the_console_user_named()
    {
        var page = Render<Senders>(p => p.AddCascadingValue(SignedIn("olga", ConsoleRole.Operator)));
        page.Find("#reason").Input("suspicious burst");
        await page.Find("button[aria-label='Quarantine sender 2']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("quarantine-sender", last.Action);
        Assert.Equal("sender 2 (reason: console user 'olga' from 192.0.2.7: suspicious burst)", last.Target);
        Assert.StartsWith("key ", last.Actor, StringComparison.Ordinal);
        Assert.Contains("(console, operator)", last.Actor, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_overview_shows_the_controllers_figures_and_drops_by_stage_without_counting_each_replica()
    {
        var figures = Services.GetRequiredService<LiveFigures>();
        await figures.PollOnceAsync(CancellationToken.None);
        var page = Render<Overview>();
        Assert.Contains("1,000 in all", page.Find("[data-testid=delivered-total]").TextContent, StringComparison.Ordinal);
        var drops = page.Find("[data-testid=drops]").TextContent;
        // 3 rule denials seen by both replicas are 3 drops, not 6; the pre-SQ's 2 MAC failures are its own.
        var compact = string.Concat(drops.Where(c => !char.IsWhiteSpace(c)));
        Assert.Contains("(f)rules3", compact, StringComparison.Ordinal);
        Assert.Contains("(c)MAC2", compact, StringComparison.Ordinal);
        Assert.Contains("DOWN", page.Find("[data-testid=components]").TextContent, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_overview_updates_when_the_poller_records_new_figures()
    {
        var figures = Services.GetRequiredService<LiveFigures>();
        await figures.PollOnceAsync(CancellationToken.None);
        var page = Render<Overview>();
        Assert.Contains("0 msg/s", page.Find("[data-testid=delivered-rate]").TextContent, StringComparison.Ordinal);
        var latest = figures.Latest!;
        figures.Record(latest with { Time = latest.Time.AddSeconds(-2), Delivered = latest.Delivered - 500 });
        // What the poller raises after each poll: the page re-renders through its dispatcher, no reload.
        await figures.PollOnceAsync(CancellationToken.None);
        // 500 more delivered over a little more than 2 s.
        page.WaitForAssertion(() => Assert.InRange(double.Parse(page.Find("[data-testid=delivered-rate]").TextContent.Split(' ')[0], System.Globalization.CultureInfo.InvariantCulture), 150, 250));
    }

    [Fact]
    public async Task The_replicas_page_shows_regency_leader_and_last_decided()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Replicas>();
        var table = page.Find("[data-testid=replicas]").TextContent;
        Assert.Contains("replica-sq-0", table, StringComparison.Ordinal);
        Assert.Contains("replica 1", table, StringComparison.Ordinal); // regency 5 over 2 replicas
        Assert.Contains("42", table, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_audit_page_lists_the_controllers_records_newest_first()
    {
        await Controller.Gateway.ReadmitSenderAsync(1, "console user 'x': first", CancellationToken.None);
        await Controller.Gateway.QuarantineSenderAsync(1, "console user 'x': second", CancellationToken.None);
        var page = Render<Audit>();
        page.WaitForAssertion(() => Assert.Equal(3, page.FindAll("[data-testid=audit] tbody tr").Count));
        Assert.Contains("quarantine-sender", page.FindAll("[data-testid=audit] tbody tr")[0].TextContent, StringComparison.Ordinal);
        Assert.Contains("start", page.FindAll("[data-testid=audit] tbody tr")[2].TextContent, StringComparison.Ordinal);
    }
}
