using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Components.Authorization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using MudBlazor.Services;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Figures;
using SieveQ.AdminUi.Hosting;
using SieveQ.Controller.Access;
using SieveQ.Controller.Orchestration;
using SieveQ.Deployment;
using SieveQ.Sieve.Keys;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// A bUnit context with the console's real services: its authorization policies (not bUnit's stand-in, so a
/// policy is evaluated as in the app), PartyActions, LiveFigures, and the gateway to a real controller.
/// </summary>
public abstract class ConsoleTestContext : BunitContext, IAsyncLifetime
{
    internal RealController Controller { get; private set; } = null!;

    /// <summary>The console's key's role at the controller: an operator, as `init` pins it, unless a test class says otherwise.</summary>
    private protected virtual ManagementRole ConsoleCallerRole => ManagementRole.Operator;

    /// <summary>What starts and stops the controller's components: none, as without `sieveq up`, unless a test class gives one.</summary>
    private protected virtual IComponentOrchestrator? Orchestrator => null;

    /// <summary>Where the controller reads the replicas' progress for a recovery: nowhere, unless a test class gives it.</summary>
    private protected virtual IReplicaProgressSource? ReplicaProgress => null;

    /// <summary>The pre-SQs page as an administrator sees it, after Replace and its confirmation were clicked on <paramref name="preSq"/>'s row.</summary>
    private protected async Task<IRenderedComponent<SieveQ.AdminUi.Components.Pages.PreSqs>> ReplaceConfirmedAsAdministratorAsync(int preSq)
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        var page = Render<SieveQ.AdminUi.Components.Pages.PreSqs>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        await page.Find($"button[aria-label='Replace pre-SQ {preSq}']").ClickAsync(new());
        await page.Find($"button[aria-label='Confirm replace of pre-SQ {preSq}']").ClickAsync(new());
        return page;
    }

    /// <summary>The console's account store (lockout after 3 failures), holding admin, olga (operator) and vera (viewer).</summary>
    internal ConsoleUserStore Users { get; private set; } = null!;

    /// <summary>The alarm book's journal, in the controller's directory.</summary>
    internal string AlarmsFile => Path.Combine(Controller.Directory, "console", "alarms.json");

    /// <summary>Each account's generated password.</summary>
    internal Dictionary<string, string> Passwords { get; } = [];

    public async Task InitializeAsync()
    {
        // Pages load from a real controller over HTTP/2: on a loaded machine that takes longer than bUnit's 1 s default
        // wait, which failed a test that waited for the audit page's rows. A bound on waiting, not a timing goal.
        DefaultWaitTimeout = TimeSpan.FromSeconds(30);
        Controller = await RealController.StartAsync(ConsoleCallerRole, Orchestrator, ReplicaProgress);
        JSInterop.Mode = JSRuntimeMode.Loose;
        Services.AddMudServices();
        Services.AddLogging();
        Services.AddMetrics();
        Services.AddSingleton<ConsoleMetrics>();
        Services.AddSingleton(TimeProvider.System);
        Services.AddSingleton<IControllerGateway>(Controller.Gateway);
        Services.AddSingleton<LiveFigures>();
        Services.AddSingleton(new AlarmJournal(AlarmsFile));
        Services.AddSingleton<AlarmBook>();
        // No channel unless a test registers a dispatch of its own (AlarmDeliveryBookTests).
        Services.AddSingleton<AlarmDeliveryMetrics>();
        Services.AddSingleton(sp => new AlarmDispatch(sp.GetRequiredService<AlarmBook>(), null, [], TimeProvider.System,
            sp.GetRequiredService<AlarmDeliveryMetrics>(), NullLogger<AlarmDispatch>.Instance));
        Services.AddScoped<AlarmTestAction>();
        Services.AddScoped<PartyActions>();
        Services.AddScoped<AlarmActions>();
        Services.AddScoped<EnrolmentActions>();
        Services.AddScoped<RuleSetChanges.RuleSetActions>();
        Users = ConsoleUserStore.Open(Path.Combine(Controller.Directory, "users.json"), new ConsoleConfig { Url = "http://127.0.0.1:1", MaxFailedLogins = 3 });
        foreach (var (name, role) in new[] { ("admin", ConsoleRole.Administrator), ("olga", ConsoleRole.Operator), ("vera", ConsoleRole.Viewer) })
        {
            Passwords[name] = await Users.AddAsync(name, role, CancellationToken.None);
        }
        Services.AddSingleton(Users);
        Services.AddScoped<AccountActions>();
        Services.AddSingleton(new DeploymentConfig
        {
            F = 1,
            Replicas = [.. Enumerable.Range(0, 4).Select(i => new ReplicaSqEntry { Id = i, Name = $"replica-sq-{i}", ApiUrl = $"http://127.0.0.1:{10 + i}" })],
            PreSqs = [new PreSqEntry { Id = 4, Name = "pre-sq-4", Url = "http://127.0.0.1:3" }, new PreSqEntry { Id = 5, Name = "pre-sq-5", Url = "http://127.0.0.1:4" }],
            Agents = [new AgentEntry { Name = "agent", Socket = "agent.sock", Senders = [1, 2], Receivers = [100, 101] }],
            BaseDirectory = Controller.Directory,
        });
        // Receiver 100 is enrolled, 101 is hosted by the agent but not enrolled, 102 enrolled without an agent.
        await File.WriteAllTextAsync(Path.Combine(Controller.Directory, "enrolment.json"), new Enrolment(1, [],
            [new EnrolledReceiver(100, "inbox", [1], [2]), new EnrolledReceiver(102, "archive", [1], [2])], [], []).ToJson());
        Services.AddAuthorizationCore(o =>
        {
            o.AddPolicy(ConsolePolicies.Viewer, p => p.RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Viewer)));
            o.AddPolicy(ConsolePolicies.Operator, p => p.RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Operator)));
            o.AddPolicy(ConsolePolicies.Administrator, p => p.RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Administrator)));
        });
        // Replaces bUnit's placeholder: the policies above are evaluated by ASP.NET Core's own service.
        Services.AddTransient<IAuthorizationService, DefaultAuthorizationService>();
    }

    /// <summary>The address the tests' browser connects from, as <see cref="BrowserAddressClaim"/> puts it in a session.</summary>
    public const string BrowserAddress = "192.0.2.7";

    /// <summary>A signed-in user as the pages get it: the session's name and role, and the address of the request's connection.</summary>
    public static Task<AuthenticationState> SignedIn(string name, ConsoleRole role) =>
        Task.FromResult(new AuthenticationState(new ClaimsPrincipal(new ClaimsIdentity(
            [new Claim(ClaimTypes.Name, name), new Claim(ClaimTypes.Role, ConsolePolicies.RoleName(role)), new Claim(BrowserAddressClaim.Type, BrowserAddress)], "test"))));

    async Task IAsyncLifetime.DisposeAsync()
    {
        await base.DisposeAsync();
        await Controller.DisposeAsync();
    }
}
