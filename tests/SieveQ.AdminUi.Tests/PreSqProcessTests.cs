using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Figures;
using SieveQ.Controller.Access;
using SieveQ.Controller.Orchestration;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// An administrator's start, stop and replacement of a pre-SQ from the pre-SQs page, through a real controller that
/// pins the console's key as an administrator and carries the calls out on an orchestrator that records them.
/// </summary>
public sealed class PreSqProcessTests : ConsoleTestContext
{
    private readonly RecordingOrchestrator _processes = new();

    private protected override ManagementRole ConsoleCallerRole => ManagementRole.Administrator;

    private protected override IComponentOrchestrator? Orchestrator => _processes;

    [Fact]
    public async Task An_administrators_replacement_waits_for_confirmation_then_reaches_the_controller_and_its_reply_is_shown()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<PreSqs>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        page.Find("#reason").Input("stuck on a full queue");
        var before = Controller.Host.Audit.LastSequence;

        await page.Find("button[aria-label='Replace pre-SQ 4']").ClickAsync(new());
        Assert.Contains("Replace pre-SQ 4?", page.Find("[data-testid=confirm-action]").TextContent, StringComparison.Ordinal);
        Assert.Empty(_processes.Calls);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);

        await page.Find("button[aria-label='Confirm replace of pre-SQ 4']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("replace of pre-SQ 4 recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        var result = page.Find("[data-testid=action-result]");
        Assert.Contains("replaced: started pid 1001, healthy", result.TextContent, StringComparison.Ordinal);
        Assert.Contains("success", result.ClassName, StringComparison.Ordinal);
        Assert.Empty(page.FindAll("[data-testid=confirm-action]"));
        Assert.Equal(["stop pre-sq-4", "start pre-sq-4"], _processes.Calls);
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("replace-pre-sq", last.Action);
        Assert.Equal("pre-SQ 4 (reason: console user 'admin' from 192.0.2.7: stuck on a full queue)", last.Target);
        Assert.Contains("(console, administrator)", last.Actor, StringComparison.Ordinal);
        Assert.Contains($"(record {last.Sequence})", result.TextContent, StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_administrator_stops_after_confirming_a_cancelled_stop_sends_nothing_and_a_start_goes_at_once()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<PreSqs>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        var before = Controller.Host.Audit.LastSequence;

        await page.Find("button[aria-label='Stop pre-SQ 5']").ClickAsync(new());
        await page.Find("button[aria-label='Cancel stop of pre-SQ 5']").ClickAsync(new());
        Assert.Empty(page.FindAll("[data-testid=confirm-action]"));
        Assert.Empty(_processes.Calls);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);

        await page.Find("button[aria-label='Stop pre-SQ 5']").ClickAsync(new());
        await page.Find("button[aria-label='Confirm stop of pre-SQ 5']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("stop of pre-SQ 5 recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        Assert.Contains("stopped: stopped pre-sq-5", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal);
        Assert.Equal("stop-pre-sq", Controller.Host.Audit.Tail(1).Single().Action);

        await page.Find("button[aria-label='Start pre-SQ 5']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("start of pre-SQ 5 recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        Assert.Equal(["stop pre-sq-5", "start pre-sq-5"], _processes.Calls);
        Assert.Equal("start-pre-sq", Controller.Host.Audit.Tail(1).Single().Action);
    }

    [Theory]
    [InlineData("olga", ConsoleRole.Operator)]
    [InlineData("vera", ConsoleRole.Viewer)]
    public async Task Below_the_administrator_role_the_buttons_are_not_offered_and_the_server_refuses_with_nothing_audited(string user, ConsoleRole role)
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<PreSqs>(p => p.AddCascadingValue(SignedIn(user, role)));
        Assert.NotEmpty(page.FindAll("button[aria-label='Quarantine pre-SQ 4']"));
        foreach (var verb in new[] { "Start", "Stop", "Replace" })
        {
            Assert.Empty(page.FindAll($"button[aria-label='{verb} pre-SQ 4']"));
        }

        // What a crafted circuit event or a stale page would reach: the actions themselves.
        var before = Controller.Host.Audit.LastSequence;
        var principal = (await SignedIn(user, role)).User;
        var actions = Services.GetRequiredService<PartyActions>();
        foreach (var (verb, result) in new[]
                 {
                     ("start", await actions.StartPreSqAsync(principal, 4, "let me", CancellationToken.None)),
                     ("stop", await actions.StopPreSqAsync(principal, 4, "let me", CancellationToken.None)),
                     ("replace", await actions.ReplacePreSqAsync(principal, 4, "let me", CancellationToken.None)),
                 })
        {
            Assert.True(result.Refused);
            Assert.False(result.Sent);
            Assert.Equal($"refused: {verb} needs the administrator role", result.Message);
        }
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        Assert.Empty(_processes.Calls);
    }

    [Fact]
    public async Task A_pre_sq_outside_the_deployment_is_refused_before_the_controller()
    {
        var before = Controller.Host.Audit.LastSequence;
        var result = await Services.GetRequiredService<PartyActions>().ReplacePreSqAsync((await SignedIn("admin", ConsoleRole.Administrator)).User, 9, "", CancellationToken.None);
        Assert.False(result.Sent);
        Assert.Contains("there is no pre-SQ 9 in this deployment", result.Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        Assert.Empty(_processes.Calls);
    }
}

/// <summary>The same calls to a controller that runs no orchestrator: it records them and says so, and the page warns.</summary>
public sealed class PreSqProcessWithoutOrchestratorTests : ConsoleTestContext
{
    private protected override ManagementRole ConsoleCallerRole => ManagementRole.Administrator;

    [Fact]
    public async Task The_controllers_no_orchestrator_reply_is_shown_as_a_warning_not_a_success()
    {
        var page = await ReplaceConfirmedAsAdministratorAsync(4);
        page.WaitForAssertion(() => Assert.Contains(AuditedOrchestration.NoOrchestrator, page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        var result = page.Find("[data-testid=action-result]");
        Assert.Contains("warning", result.ClassName, StringComparison.Ordinal);
        Assert.DoesNotContain("success", result.ClassName, StringComparison.Ordinal);
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal(("replace-pre-sq", AuditedOrchestration.NoOrchestrator), (last.Action, last.Outcome));
    }
}
