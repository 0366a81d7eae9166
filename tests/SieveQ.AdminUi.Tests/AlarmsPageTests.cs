using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.AdminUi.Access;
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

    /// <summary>A second console on the same journal, as after a restart.</summary>
    private AlarmBook Restarted() => new(Services.GetRequiredService<LiveFigures>(), Controller.Gateway, Services.GetRequiredService<DeploymentConfig>(),
        new AlarmJournal(AlarmsFile), TimeProvider.System, Services.GetRequiredService<System.Diagnostics.Metrics.IMeterFactory>(), NullLogger<AlarmBook>.Instance);

    [Fact]
    public async Task An_operator_acknowledges_an_alarm_the_controller_audits_it_and_it_stays_acknowledged_across_a_restart_until_it_clears()
    {
        var book = await RefreshAsync();
        const string key = "component/pre-sq/pre-sq-4";
        var since = book.Find(key)!.Since;
        var page = Render<Alarms>(p => p.AddCascadingValue(SignedIn("olga", ConsoleRole.Operator)));
        page.Find("#reason").Input("restarting the host");
        await page.Find($"button[aria-label='Acknowledge {key}']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.StartsWith("alarm acknowledged; recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        var record = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal((AlarmActions.AuditAction, key, "console user 'olga' from 192.0.2.7: restarting the host"), (record.Action, record.Target, record.Outcome));
        Assert.Contains("(console, operator)", record.Actor, StringComparison.Ordinal);
        var cell = page.Find($"[data-testid='ack-{key}']").TextContent;
        Assert.Contains("acknowledged by olga at ", cell, StringComparison.Ordinal);
        Assert.Contains($"restarting the host (audit record {record.Sequence})", cell, StringComparison.Ordinal);
        // The other alarm is still to be taken on.
        Assert.NotEmpty(page.FindAll("button[aria-label='Acknowledge quarantine/pre-sq/4']"));

        // A console restarted on the same journal: the alarm keeps its first-seen time and its acknowledgement.
        var again = Restarted();
        await again.RefreshAsync(CancellationToken.None);
        var kept = again.Find(key)!;
        Assert.Equal(since, kept.Since);
        Assert.Equal(("olga", "restarting the host", record.Sequence), (kept.Acknowledged!.By, kept.Acknowledged.Reason, kept.Acknowledged.AuditSequence));
        Assert.Null(again.Find("quarantine/pre-sq/4")!.Acknowledged);

        // The condition clears: the acknowledgement goes with it, on disk too; when it comes back it is a new alarm to take on.
        var down = Controller.Health;
        Controller.Health = [Replica(0, 10, 1, 0), Replica(1, 10, 1, 0)];
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        await again.RefreshAsync(CancellationToken.None);
        Assert.Null(again.Find(key));
        Assert.DoesNotContain(key, await File.ReadAllTextAsync(AlarmsFile), StringComparison.Ordinal);
        Controller.Health = down;
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        await again.RefreshAsync(CancellationToken.None);
        Assert.Null(again.Find(key)!.Acknowledged);
    }

    [Fact]
    public async Task Acknowledgements_a_viewer_asks_for_or_without_a_reason_or_of_no_open_alarm_or_twice_are_not_sent()
    {
        await RefreshAsync();
        var actions = Services.GetRequiredService<AlarmActions>();
        var olga = (await SignedIn("olga", ConsoleRole.Operator)).User;
        var before = Controller.Host.Audit.LastSequence;
        var refused = await actions.AcknowledgeAsync((await SignedIn("vera", ConsoleRole.Viewer)).User, "component/pre-sq/pre-sq-4", "mine", CancellationToken.None);
        Assert.True(refused.Refused);
        foreach (var (key, reason, message) in new[]
        {
            ("component/pre-sq/pre-sq-4", "  ", "say what is being done"),
            ("component/pre-sq/pre-sq-9", "mine", "no such alarm is open"),
            ("", "mine", "no such alarm is open"),
            (new string('k', 300), "mine", "no such alarm is open"),
            ("component/pre-sq/pre-sq-4", "line\nbreak", "without control characters"),
        })
        {
            var result = await actions.AcknowledgeAsync(olga, key, reason, CancellationToken.None);
            Assert.False(result.Sent);
            Assert.Contains(message, result.Message, StringComparison.Ordinal);
        }
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        Assert.True((await actions.AcknowledgeAsync(olga, "component/pre-sq/pre-sq-4", "mine", CancellationToken.None)).Sent);
        var twice = await actions.AcknowledgeAsync(olga, "component/pre-sq/pre-sq-4", "mine too", CancellationToken.None);
        Assert.False(twice.Sent);
        Assert.Contains("acknowledged by olga", twice.Message, StringComparison.Ordinal);
        Assert.Equal(before + 1, Controller.Host.Audit.LastSequence);
    }

    [Theory]
    [InlineData("not json")]
    [InlineData("[{\"key\":\"a\",\"since\":\"2026-11-26T00:00:00+00:00\"},{\"key\":\"a\",\"since\":\"2026-11-26T00:00:00+00:00\"}]")]
    [InlineData("[{\"key\":\"a\",\"since\":\"2026-11-26T00:00:00+00:00\",\"acknowledged\":{\"by\":\"\",\"at\":\"2026-11-26T00:00:00+00:00\",\"reason\":\"x\",\"auditSequence\":1}}]")]
    public async Task A_damaged_journal_is_set_aside_and_the_book_starts_from_what_is_seen_now(string text)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(AlarmsFile)!);
        await File.WriteAllTextAsync(AlarmsFile, text);
        var book = Restarted();
        Assert.Equal(text, await File.ReadAllTextAsync(AlarmsFile + ".bad"));
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        await book.RefreshAsync(CancellationToken.None);
        Assert.Equal(2, book.Open.Count);
        Assert.Contains("component/pre-sq/pre-sq-4", await File.ReadAllTextAsync(AlarmsFile), StringComparison.Ordinal);
    }

    [Fact]
    public void The_consoles_certificate_is_an_alarm_from_fourteen_days_before_it_expires()
    {
        using var key = System.Security.Cryptography.ECDsa.Create();
        var now = DateTimeOffset.UtcNow;
        using var certificate = new System.Security.Cryptography.X509Certificates.CertificateRequest("CN=console", key,
            System.Security.Cryptography.HashAlgorithmName.SHA256).CreateSelfSigned(now.AddDays(-30), now.AddDays(10));
        Assert.Null(AlarmConditions.CertificateExpiry(certificate, now.AddDays(-5)));
        var soon = AlarmConditions.CertificateExpiry(certificate, now)!;
        Assert.Equal(("tls/console-certificate", "certificate"), (soon.Key, soon.Kind));
        Assert.Contains("in 10 day(s)", soon.Message, StringComparison.Ordinal);
        Assert.Contains("expired at", AlarmConditions.CertificateExpiry(certificate, now.AddDays(11))!.Message, StringComparison.Ordinal);
    }
}
