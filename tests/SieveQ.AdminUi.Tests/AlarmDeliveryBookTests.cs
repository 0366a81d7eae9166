using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Figures;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// The alarm book's changes, from a real controller's status and audit log, reaching a real webhook receiver; and
/// the alarms page's "send a test alarm", audited by the controller and refused to all but administrators.
/// </summary>
public sealed class AlarmDeliveryBookTests : ConsoleTestContext
{
    private const string Secret = "book-tests-webhook-secret-0123456789";

    /// <summary>The console's dispatch with one webhook to <paramref name="receiver"/>, registered before the page or the book is first asked for.</summary>
    private void UseWebhook(LoopbackWebhookReceiver receiver) =>
        Services.AddSingleton(sp => new AlarmDispatch(sp.GetRequiredService<AlarmBook>(), new AlarmDeliveryConfig { Instance = "console-test", ReminderMinutes = 0 },
            [new AlarmWebhookChannel(new AlarmWebhookConfig { Name = "ops", Url = receiver.Url, SecretFile = "unused" }, Secret, TimeProvider.System)],
            TimeProvider.System, sp.GetRequiredService<AlarmDeliveryMetrics>(), NullLogger<AlarmDispatch>.Instance));

    /// <summary>Runs <paramref name="test"/> with the console's dispatch (one webhook to <paramref name="receiver"/>) started as the host starts it.</summary>
    private async Task WithDispatchAsync(LoopbackWebhookReceiver receiver, Func<AlarmDispatch, Task> test)
    {
        UseWebhook(receiver);
        var dispatch = Services.GetRequiredService<AlarmDispatch>();
        using var stop = new CancellationTokenSource();
        await dispatch.StartAsync(stop.Token);
        try
        {
            await test(dispatch);
        }
        finally
        {
            await stop.CancelAsync();
            await dispatch.StopAsync(CancellationToken.None);
        }
    }

    private async Task RefreshAsync()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        await Services.GetRequiredService<AlarmBook>().RefreshAsync(CancellationToken.None);
    }

    private static AlarmNoticeDocument Verified(WebhookRequest request)
    {
        Assert.True(AlarmWebhookSignature.Verify(Secret, request.Header(AlarmWebhookSignature.TimestampHeader), request.Header(AlarmWebhookSignature.SignatureHeader), request.Body));
        return AlarmNoticeDocument.Parse(request.Body)!;
    }

    [Fact]
    public async Task Raise_acknowledge_and_clear_in_the_book_each_reach_the_webhook_once()
    {
        await using var receiver = await LoopbackWebhookReceiver.StartAsync();
        await WithDispatchAsync(receiver, async dispatch =>
        {
            await RefreshAsync();
            await RefreshAsync();
            var raised = (await receiver.WaitForAsync(2)).Select(Verified).ToList();
            Assert.Equal(["component/pre-sq/pre-sq-4", "quarantine/pre-sq/4"], raised.Select(d => d.AlarmKey).Order(StringComparer.Ordinal));
            Assert.All(raised, d => Assert.Equal(("raised", "console-test"), (d.State, d.Console)));

            var olga = (await SignedIn("olga", ConsoleRole.Operator)).User;
            var ack = await Services.GetRequiredService<AlarmActions>().AcknowledgeAsync(olga, "component/pre-sq/pre-sq-4", "restarting the host", CancellationToken.None);
            Assert.True(ack.Sent);
            var acknowledged = Verified((await receiver.WaitForAsync(3))[2]);
            Assert.Equal(("acknowledged", "component/pre-sq/pre-sq-4"), (acknowledged.State, acknowledged.AlarmKey));
            Assert.Equal(("olga", "restarting the host", ack.AuditSequence), (acknowledged.Acknowledgement!.By, acknowledged.Acknowledgement.Reason, acknowledged.Acknowledgement.AuditSequence));

            Controller.Health = [Replica(0), Replica(1)];
            await RefreshAsync();
            await RefreshAsync();
            var cleared = (await receiver.WaitForAsync(5)).Skip(3).Select(Verified).ToList();
            Assert.All(cleared, d => Assert.Equal("cleared", d.State));
            Assert.Equal(raised.Select(d => d.AlarmKey).Order(StringComparer.Ordinal), cleared.Select(d => d.AlarmKey).Order(StringComparer.Ordinal));
            // Every notice about one alarm has its own event id; refreshes in between sent nothing more.
            Assert.Equal(5, receiver.Requests.Select(r => r.Header(AlarmWebhookSignature.EventIdHeader)).Distinct().Count());
            await Eventually.TrueAsync(() => dispatch.Queues[0].Sent == 5, "five sent");
            Assert.Equal(5, receiver.Requests.Count);
        });
    }

    private static ComponentHealth Replica(int id) =>
        new("replica-sq", $"replica-sq-{id}", $"http://127.0.0.1:{10 + id}", true, true, "ok", new Dictionary<string, long> { ["last_decided"] = 10, ["rules.active_version"] = 1 });

    [Fact]
    public async Task An_administrator_sends_a_test_alarm_from_the_page_the_controller_audits_it_and_the_webhook_gets_it()
    {
        await using var receiver = await LoopbackWebhookReceiver.StartAsync();
        await WithDispatchAsync(receiver, async _ =>
        {
            var page = Render<Alarms>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
            Assert.Contains("webhook:ops", page.Find("[data-testid='channel-webhook:ops']").TextContent, StringComparison.Ordinal);
            await page.Find("button[aria-label='Send a test alarm']").ClickAsync(new());
            page.WaitForAssertion(() => Assert.StartsWith("test alarm queued for webhook:ops; recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
            var record = Controller.Host.Audit.Tail(1).Single();
            Assert.Equal((AlarmTestAction.AuditAction, "webhook:ops", "console user 'admin' from 192.0.2.7: test alarm"), (record.Action, record.Target, record.Outcome));
            var test = Verified((await receiver.WaitForAsync(1)).Single());
            Assert.Equal(("test", "info", "test: sent by admin"), (test.State, test.Severity, test.Title));
        });
    }

    [Fact]
    public async Task An_operator_or_a_viewer_is_refused_a_test_alarm_and_nothing_is_recorded_or_sent()
    {
        await using var receiver = await LoopbackWebhookReceiver.StartAsync();
        UseWebhook(receiver);
        var action = Services.GetRequiredService<AlarmTestAction>();
        var before = Controller.Host.Audit.LastSequence;
        foreach (var (name, role) in new[] { ("olga", ConsoleRole.Operator), ("vera", ConsoleRole.Viewer) })
        {
            var result = await action.SendAsync((await SignedIn(name, role)).User, CancellationToken.None);
            Assert.True(result.Refused);
            Assert.Equal("refused: sending a test alarm needs the administrator role", result.Message);
        }
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        Assert.Equal(0, Services.GetRequiredService<AlarmDispatch>().Queues[0].Depth);
        Assert.Empty(receiver.Requests);
    }

    [Fact]
    public async Task Without_channels_the_page_says_so_and_a_test_alarm_is_not_sent()
    {
        var page = Render<Alarms>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        Assert.Contains("no webhook or e-mail is configured", page.Find("[data-testid=no-channels]").TextContent, StringComparison.Ordinal);
        var before = Controller.Host.Audit.LastSequence;
        await page.Find("button[aria-label='Send a test alarm']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("no alarm channel is configured", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }
}
