using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Figures;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>The receivers and pre-SQs pages against the real controller, and pre-SQ quarantine through the same path as senders'.</summary>
public sealed class PartyPagesTests : ConsoleTestContext
{
    private static string Compact(string text) => string.Concat(text.Where(c => !char.IsWhiteSpace(c)));

    [Fact]
    public async Task The_receivers_page_shows_enrolment_the_agents_delivery_counters_and_each_replicas_queue()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Receivers>();
        page.WaitForAssertion(() => Assert.Equal(3, page.FindAll("[data-testid=receivers] tbody tr").Count));
        var inbox = Compact(page.Find("[data-testid=receiver-100]").TextContent);
        Assert.StartsWith("100(inbox)enrolledagent1,000990", inbox, StringComparison.Ordinal);
        // Each replica's own copy of the queue: 3 messages / 2 KiB at one, 5 / 4 KiB at the other.
        Assert.Contains("3/2.0KiB5/4.0KiB", inbox, StringComparison.Ordinal);
        Assert.StartsWith("101NOTenrolledagent", Compact(page.Find("[data-testid=receiver-101]").TextContent), StringComparison.Ordinal);
        Assert.StartsWith("102(archive)enrollednone", Compact(page.Find("[data-testid=receiver-102]").TextContent), StringComparison.Ordinal);
        Assert.Contains("Queue at replica-sq-1", page.Find("[data-testid=receivers] thead").TextContent, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_pre_sqs_page_shows_health_the_replicas_quarantine_verdict_drops_and_the_admission_rate()
    {
        var figures = Services.GetRequiredService<LiveFigures>();
        await figures.PollOnceAsync(CancellationToken.None);
        var latest = figures.Latest!;
        // A poll two seconds earlier, when pre-SQ 4 had admitted 300: 200 more in 2 s is 100 msg/s.
        var earlier = latest.Components.Select(c => c.Clone()).ToList();
        earlier.Single(c => c.Name == "pre-sq-4").Counters["passed"] = 300;
        figures.Record(latest with { Time = latest.Time.AddSeconds(-2), Components = earlier });
        figures.Record(latest);
        var page = Render<PreSqs>();
        var four = Compact(page.Find("[data-testid=pre-sq-4]").TextContent);
        // Both replicas say quarantined (f+1 = 2); suspicion 7 is what f+1 replicas report at least (9 and 7).
        Assert.StartsWith("4(pre-sq-4)DOWNquarantined(2of2replicas)7100500", four, StringComparison.Ordinal);
        // Its own drops, the stages that dropped anything only.
        Assert.Contains("500(c)MAC2", four, StringComparison.Ordinal);
        Assert.Contains("none", page.Find("[data-testid=pre-sq-5]").TextContent, StringComparison.Ordinal);
        // One replica of two says quarantined: not f+1, so not quarantined, and the page says they disagree.
        Assert.Contains("split:1of2replicassayquarantined,2needed", Compact(page.Find("[data-testid=pre-sq-5]").TextContent), StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_pre_sqs_page_shows_the_senders_f_plus_1_replicas_assign_to_each_pre_sq_and_the_moving_ones()
    {
        static ComponentHealth Replica(int id, Dictionary<string, long> assigned) =>
            new("replica-sq", $"replica-sq-{id}", $"http://127.0.0.1:{id + 1}", true, true, "ok", assigned);
        // f = 1: a sender counts for a pre-SQ when two replicas report it there.
        Controller.Health =
        [
            Replica(0, new() { ["assigned.sender.1"] = 4, ["assigned.sender.2"] = 4, ["assigned.sender.3"] = 5, ["assigned.sender.4"] = 4, ["assigned.sender.x"] = 5 }),
            Replica(1, new() { ["assigned.sender.1"] = 4, ["assigned.sender.2"] = 4, ["assigned.sender.3"] = 4, ["assigned.sender.4"] = 4 }),
            Replica(2, new() { ["assigned.sender.1"] = 4, ["assigned.sender.2"] = 5, ["assigned.sender.4"] = 5, ["last_loss_ppm.sender.1"] = 0 }),
            Replica(3, new() { ["assigned.sender.1"] = 4, ["assigned.sender.4"] = 5 }),
        ];
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<PreSqs>();
        // Sender 1: all four; sender 2: two of four (the third says 5).
        Assert.Equal("2: 1, 2", page.Find("[data-testid=senders-of-4]").TextContent.Trim());
        Assert.Equal("0", page.Find("[data-testid=senders-of-5]").TextContent.Trim());
        // Sender 3: one replica each for 4 and 5, one reports none; sender 4: two each for 4 and 5, no single verdict.
        Assert.Equal("replica-sq-0: pre-SQ 5; replica-sq-1: pre-SQ 4; replica-sq-2: none; replica-sq-3: none",
            page.Find("[data-testid=moving-3] td:nth-child(2)").TextContent.Trim());
        Assert.Contains("replica-sq-2: pre-SQ 5; replica-sq-3: pre-SQ 5", page.Find("[data-testid=moving-4]").TextContent, StringComparison.Ordinal);
        Assert.Equal(2, page.FindAll("[data-testid=moving-senders] tbody tr").Count);

        // The move executed everywhere: no one is moving any more.
        Controller.Health = [Replica(0, new() { ["assigned.sender.3"] = 5 }), Replica(1, new() { ["assigned.sender.3"] = 5 })];
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        page.WaitForAssertion(() => Assert.Equal("1: 3", page.Find("[data-testid=senders-of-5]").TextContent.Trim()));
        Assert.Empty(page.FindAll("[data-testid=moving-senders]"));
    }

    [Fact]
    public async Task A_viewer_is_refused_pre_sq_quarantine_and_readmission_on_the_server_and_nothing_reaches_the_audit_log()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var before = Controller.Host.Audit.LastSequence;
        var page = Render<PreSqs>(p => p.AddCascadingValue(SignedIn("vera", ConsoleRole.Viewer)));
        foreach (var button in new[] { "Quarantine pre-SQ 4", "Readmit pre-SQ 4" })
        {
            await page.Find($"button[aria-label='{button}']").ClickAsync(new());
            page.WaitForAssertion(() => Assert.StartsWith("refused: ", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        }
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task An_operator_quarantines_and_readmits_a_pre_sq_through_the_controller_audited_with_the_console_user()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<PreSqs>(p => p.AddCascadingValue(SignedIn("olga", ConsoleRole.Operator)));
        page.Find("#reason").Input("flooding");
        await page.Find("button[aria-label='Quarantine pre-SQ 5']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("quarantine of pre-SQ 5 recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("quarantine-pre-sq", last.Action);
        Assert.Equal("pre-SQ 5 (reason: console user 'olga' from 192.0.2.7: flooding)", last.Target);
        Assert.Contains("(console, operator)", last.Actor, StringComparison.Ordinal);
        await page.Find("button[aria-label='Readmit pre-SQ 5']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Equal("readmit-pre-sq", Controller.Host.Audit.Tail(1).Single().Action));
    }

    [Fact]
    public async Task A_controller_that_pins_the_console_as_an_operator_refuses_an_administrators_replacement_and_the_page_shows_the_refusal()
    {
        var page = await ReplaceConfirmedAsAdministratorAsync(4);
        page.WaitForAssertion(() => Assert.StartsWith("refused by the controller for the console's key: PermissionDenied", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        Assert.Contains("error", page.Find("[data-testid=action-result]").ClassName, StringComparison.Ordinal);
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("replace-pre-sq", last.Action);
        Assert.StartsWith("refused: role ", last.Outcome, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(9u, "ok", "there is no pre-SQ 9 in this deployment")]
    [InlineData(4u, "line\nbreak", "without control characters")]
    [InlineData(4u, "a reason far longer than the one hundred and sixty-eight characters the console allows in a reason, which the controller would keep in its log with the user and the address in front of it", "at most 168 characters")]
    public async Task Malformed_pre_sq_requests_are_refused_before_the_controller(uint preSq, string reason, string message)
    {
        var before = Controller.Host.Audit.LastSequence;
        var actions = Services.GetRequiredService<PartyActions>();
        var result = await actions.QuarantinePreSqAsync((await SignedIn("olga", ConsoleRole.Operator)).User, preSq, reason, CancellationToken.None);
        Assert.False(result.Sent);
        Assert.False(result.Refused);
        Assert.Contains(message, result.Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task A_sender_outside_the_deployment_is_refused_before_the_controller()
    {
        var before = Controller.Host.Audit.LastSequence;
        var result = await Services.GetRequiredService<PartyActions>().ReadmitSenderAsync((await SignedIn("olga", ConsoleRole.Operator)).User, 77, "x", CancellationToken.None);
        Assert.Contains("there is no sender 77", result.Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task A_reason_of_the_forms_full_length_from_the_longest_user_name_is_recorded_by_the_controller()
    {
        // A Kerberos principal of the most characters sign-in takes: its attributed reason is the longest the console sends.
        var user = NegotiateSignIn.ConsoleName(new string('k', WindowsSignInConfig.MaxNameLength - "@EXAMPLE.ORG".Length) + "@EXAMPLE.ORG");
        var reason = new string('r', PartyActions.MaxReasonLength);
        var result = await Services.GetRequiredService<PartyActions>().QuarantinePreSqAsync((await SignedIn(user, ConsoleRole.Operator)).User, 5, reason, CancellationToken.None);
        Assert.True(result.Sent, result.Message);
        Assert.Equal($"pre-SQ 5 (reason: console user '{user}' from 192.0.2.7: {reason})", Controller.Host.Audit.Tail(1).Single().Target);
    }
}
