using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Figures;
using SieveQ.Controller.Access;
using SieveQ.Controller.Orchestration;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// An administrator's recovery of a replica-SQ, and a recovery round, from the replicas page, through a real
/// controller that pins the console's key as an administrator, carries the steps out on an orchestrator that records
/// them, and reads the replicas as four healthy ones that link to each other.
/// </summary>
public sealed class ReplicaRecoveryPageTests : ConsoleTestContext
{
    private readonly RecordingOrchestrator _processes = new();

    private protected override ManagementRole ConsoleCallerRole => ManagementRole.Administrator;

    private protected override IComponentOrchestrator? Orchestrator => _processes;

    private protected override IReplicaProgressSource? ReplicaProgress { get; } = new HealthyReplicas();

    [Fact]
    public async Task An_administrators_recovery_waits_for_confirmation_then_the_controller_restarts_the_replica_and_says_it_caught_up()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Replicas>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        page.Find("#reason").Input("weekly rejuvenation");
        var before = Controller.Host.Audit.LastSequence;

        await page.Find("button[aria-label='Recover replica-SQ 1']").ClickAsync(new());
        Assert.Contains("Recover replica-SQ 1?", page.Find("[data-testid=confirm-action]").TextContent, StringComparison.Ordinal);
        Assert.Empty(_processes.Calls);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);

        await page.Find("button[aria-label='Confirm recovery of replica-SQ 1']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("recover of replica-SQ 1 recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        var result = page.Find("[data-testid=action-result]");
        Assert.Contains("recovered: started pid 1001, healthy; caught up: decided up to 100", result.TextContent, StringComparison.Ordinal);
        Assert.Contains("success", result.ClassName, StringComparison.Ordinal);
        Assert.Equal(["stop replica-sq-1", "start replica-sq-1"], _processes.Calls);
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("recover-replica", last.Action);
        Assert.Equal("replica-SQ 1 (reason: console user 'admin' from 192.0.2.7: weekly rejuvenation)", last.Target);
        Assert.Contains("(console, administrator)", last.Actor, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_confirmed_round_recovers_every_replica_and_a_cancelled_one_sends_nothing()
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Replicas>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        var before = Controller.Host.Audit.LastSequence;

        await page.Find("button[aria-label='Recovery round']").ClickAsync(new());
        await page.Find("button[aria-label='Cancel recovery round']").ClickAsync(new());
        Assert.Empty(page.FindAll("[data-testid=confirm-action]"));
        Assert.Equal(before, Controller.Host.Audit.LastSequence);

        await page.Find("button[aria-label='Recovery round']").ClickAsync(new());
        await page.Find("button[aria-label='Confirm recovery round']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("recover of every replica-SQ recorded in the audit log", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        Assert.Contains("done: recovered replica-sq-0, replica-sq-1, replica-sq-2, replica-sq-3", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal);
        Assert.Equal(8, _processes.Calls.Count);
        Assert.Equal("recovery-round", Controller.Host.Audit.Tail(1).Single().Action);
    }

    [Theory]
    [InlineData("olga", ConsoleRole.Operator)]
    [InlineData("vera", ConsoleRole.Viewer)]
    public async Task Below_the_administrator_role_nothing_is_offered_and_the_server_refuses_with_nothing_audited(string user, ConsoleRole role)
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<Replicas>(p => p.AddCascadingValue(SignedIn(user, role)));
        Assert.NotEmpty(page.FindAll("[data-testid=replica-replica-sq-1]"));
        Assert.Empty(page.FindAll("button[aria-label='Recover replica-SQ 1']"));
        Assert.Empty(page.FindAll("button[aria-label='Recovery round']"));

        var before = Controller.Host.Audit.LastSequence;
        var principal = (await SignedIn(user, role)).User;
        var actions = Services.GetRequiredService<PartyActions>();
        foreach (var result in new[]
                 {
                     await actions.RecoverReplicaAsync(principal, 1, "let me", CancellationToken.None),
                     await actions.RecoverReplicasAsync(principal, "let me", CancellationToken.None),
                 })
        {
            Assert.True(result.Refused);
            Assert.Equal("refused: recover needs the administrator role", result.Message);
        }
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        Assert.Empty(_processes.Calls);
    }

    [Fact]
    public async Task A_replica_outside_the_deployment_is_refused_before_the_controller()
    {
        var before = Controller.Host.Audit.LastSequence;
        var result = await Services.GetRequiredService<PartyActions>().RecoverReplicaAsync((await SignedIn("admin", ConsoleRole.Administrator)).User, 7, "", CancellationToken.None);
        Assert.False(result.Sent);
        Assert.Contains("there is no replica-SQ 7 in this deployment", result.Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    /// <summary>Four replicas, healthy, decided up to 100, each linked to the three others, in regency 0.</summary>
    private sealed class HealthyReplicas : IReplicaProgressSource
    {
        public IReadOnlyList<int> Replicas { get; } = [0, 1, 2, 3];

        public int F => 1;

        public Task<ReplicaProgress> ReadAsync(int replica, CancellationToken ct) =>
            Task.FromResult(new ReplicaProgress(replica, true, 100, 0, "ok", 3));
    }
}
