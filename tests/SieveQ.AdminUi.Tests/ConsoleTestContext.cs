using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Components.Authorization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using MudBlazor.Services;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Figures;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// A bUnit context with the console's real services: its authorization policies (not bUnit's stand-in, so a
/// policy is evaluated as in the app), SenderActions, LiveFigures, and the gateway to a real controller.
/// </summary>
public abstract class ConsoleTestContext : BunitContext, IAsyncLifetime
{
    internal RealController Controller { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        Controller = await RealController.StartAsync();
        JSInterop.Mode = JSRuntimeMode.Loose;
        Services.AddMudServices();
        Services.AddLogging();
        Services.AddMetrics();
        Services.AddSingleton<ConsoleMetrics>();
        Services.AddSingleton(TimeProvider.System);
        Services.AddSingleton<IControllerGateway>(Controller.Gateway);
        Services.AddSingleton<LiveFigures>();
        Services.AddScoped<SenderActions>();
        Services.AddSingleton(new DeploymentConfig
        {
            F = 1,
            Replicas = [],
            PreSqs = [],
            Agents = [new AgentEntry { Name = "agent", Socket = "agent.sock", Senders = [1, 2], Receivers = [100] }],
        });
        Services.AddAuthorizationCore(o =>
        {
            o.AddPolicy(ConsolePolicies.Viewer, p => p.RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Viewer)));
            o.AddPolicy(ConsolePolicies.Operator, p => p.RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Operator)));
        });
        // Replaces bUnit's placeholder: the policies above are evaluated by ASP.NET Core's own service.
        Services.AddTransient<IAuthorizationService, DefaultAuthorizationService>();
    }

    public static Task<AuthenticationState> SignedIn(string name, ConsoleRole role) =>
        Task.FromResult(new AuthenticationState(new ClaimsPrincipal(new ClaimsIdentity(
            [new Claim(ClaimTypes.Name, name), new Claim(ClaimTypes.Role, ConsolePolicies.RoleName(role))], "test"))));

    async Task IAsyncLifetime.DisposeAsync()
    {
        await base.DisposeAsync();
        await Controller.DisposeAsync();
    }
}
