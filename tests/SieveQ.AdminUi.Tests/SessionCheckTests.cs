using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Tests;

/// <summary>The cookie handler's per-request check of a session against the account store.</summary>
public sealed class SessionCheckTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-sessions-").FullName;
    private readonly ConsoleUserStore _users;
    private readonly ServiceProvider _services;

    public SessionCheckTests()
    {
        _users = ConsoleUserStore.Open(Path.Combine(_dir, "users.json"), new ConsoleConfig { Url = "http://127.0.0.1:1" });
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddAuthentication(CookieAuthenticationDefaults.AuthenticationScheme).AddCookie();
        _services = services.BuildServiceProvider();
    }

    /// <summary>A session as the sign-in makes it now: its password's stamp and a session id.</summary>
    private async Task<ClaimsPrincipal> SignInAsync(string name, ConsoleRole role)
    {
        var stored = await _users.FindAsync(name, CancellationToken.None);
        return Session(name, role, stored is null ? "none" : SessionStanding.PasswordStampOf(stored), SessionStanding.NewSessionId());
    }

    private static ClaimsPrincipal Session(string name, ConsoleRole role, string? stamp, string? sessionId) =>
        new(new ClaimsIdentity(
            [
                new Claim(ClaimTypes.Name, name), new Claim(ClaimTypes.Role, ConsolePolicies.RoleName(role)),
                .. stamp is null ? Array.Empty<Claim>() : [new Claim(SessionStanding.PasswordStampType, stamp)],
                .. sessionId is null ? Array.Empty<Claim>() : [new Claim(SessionStanding.SessionIdType, sessionId)],
            ], CookieAuthenticationDefaults.AuthenticationScheme));

    private async Task<ClaimsPrincipal?> CheckAsync(string name, ConsoleRole role) => await CheckAsync(await SignInAsync(name, role));

    private async Task<ClaimsPrincipal?> CheckAsync(ClaimsPrincipal principal)
    {
        var context = new CookieValidatePrincipalContext(new DefaultHttpContext { RequestServices = _services },
            new AuthenticationScheme(CookieAuthenticationDefaults.AuthenticationScheme, null, typeof(CookieAuthenticationHandler)),
            new CookieAuthenticationOptions(), new AuthenticationTicket(principal, CookieAuthenticationDefaults.AuthenticationScheme));
        await SessionCheck.ValidateAsync(context, _users);
        return context.Principal;
    }

    [Fact]
    public async Task A_session_ends_when_its_account_is_disabled_given_another_role_or_removed()
    {
        await _users.AddAsync("admin", ConsoleRole.Administrator, CancellationToken.None);
        await _users.AddAsync("olga", ConsoleRole.Operator, CancellationToken.None);
        Assert.NotNull(await CheckAsync("olga", ConsoleRole.Operator));
        // The cookie says administrator; the store does not.
        Assert.Null(await CheckAsync("olga", ConsoleRole.Administrator));
        Assert.Null(await CheckAsync("nobody", ConsoleRole.Viewer));
        await _users.SetRoleAsync("olga", ConsoleRole.Viewer, CancellationToken.None);
        Assert.Null(await CheckAsync("olga", ConsoleRole.Operator));
        Assert.NotNull(await CheckAsync("olga", ConsoleRole.Viewer));
        await _users.SetDisabledAsync("olga", true, CancellationToken.None);
        Assert.Null(await CheckAsync("olga", ConsoleRole.Viewer));
    }

    [Fact]
    public async Task A_password_reset_ends_every_session_of_the_account_and_a_users_own_change_every_other()
    {
        await _users.AddAsync("admin", ConsoleRole.Administrator, CancellationToken.None);
        await _users.AddAsync("olga", ConsoleRole.Operator, CancellationToken.None);
        var laptop = await SignInAsync("olga", ConsoleRole.Operator);
        var stolen = await SignInAsync("olga", ConsoleRole.Operator);
        Assert.NotNull(await CheckAsync(laptop));
        Assert.NotNull(await CheckAsync(stolen));
        // A cookie from before sessions carried the password's stamp is not taken.
        Assert.Null(await CheckAsync(Session("olga", ConsoleRole.Operator, null, null)));

        // Olga changes her password from the laptop: that session stands on, the other ends.
        await _users.SetPasswordAsync("olga", "a new password for olga", laptop.FindFirst(SessionStanding.SessionIdType)!.Value, CancellationToken.None);
        Assert.NotNull(await CheckAsync(laptop));
        Assert.Null(await CheckAsync(stolen));
        var fresh = await SignInAsync("olga", ConsoleRole.Operator);
        Assert.NotNull(await CheckAsync(fresh));

        // A reset (the administrator's tool, no session of hers): every session signed in before it ends.
        await _users.SetPasswordAsync("olga", "the administrator's reset", null, CancellationToken.None);
        Assert.Null(await CheckAsync(laptop));
        Assert.Null(await CheckAsync(fresh));
        Assert.NotNull(await CheckAsync("olga", ConsoleRole.Operator));
    }

    [Fact]
    public async Task A_provider_session_is_kept_while_its_provider_is_configured_and_ended_otherwise()
    {
        var oidc = new ConsoleOidcConfig
        {
            DisplayName = "Test", Authority = "https://idp.example/", ClientId = "c", ClientSecretFile = "s",
            Roles = new Dictionary<string, string> { ["ops"] = "operator" },
        };
        async Task<ClaimsPrincipal?> CheckProviderAsync(string authority, string name, string role, ConsoleOidcConfig? configured)
        {
            var principal = new ClaimsPrincipal(new ClaimsIdentity(
            [
                new Claim(ClaimTypes.Name, name), new Claim(ClaimTypes.Role, role),
                new Claim(OidcSignIn.SourceClaim, OidcSignIn.SourceValue), new Claim(OidcSignIn.AuthorityClaim, authority),
            ], CookieAuthenticationDefaults.AuthenticationScheme));
            var context = new CookieValidatePrincipalContext(new DefaultHttpContext { RequestServices = _services },
                new AuthenticationScheme(CookieAuthenticationDefaults.AuthenticationScheme, null, typeof(CookieAuthenticationHandler)),
                new CookieAuthenticationOptions(), new AuthenticationTicket(principal, CookieAuthenticationDefaults.AuthenticationScheme));
            await SessionCheck.ValidateAsync(context, _users, configured);
            return context.Principal;
        }
        // No local account "oidc:olga" exists (the name cannot be one): the provider's session stands on its own.
        Assert.NotNull(await CheckProviderAsync("https://idp.example/", "oidc:olga", "operator", oidc));
        Assert.Null(await CheckProviderAsync("https://other.example/", "oidc:olga", "operator", oidc));
        Assert.Null(await CheckProviderAsync("https://idp.example/", "oidc:olga", "operator", null));
        Assert.Null(await CheckProviderAsync("https://idp.example/", "oidc:olga", "root", oidc));
        Assert.Null(await CheckProviderAsync("https://idp.example/", "olga", "operator", oidc));
        // A local session is still checked against the store (CheckAsync: the same handler).
        await _users.AddAsync("admin", ConsoleRole.Administrator, CancellationToken.None);
        await _users.AddAsync("olga", ConsoleRole.Operator, CancellationToken.None);
        await _users.SetDisabledAsync("olga", true, CancellationToken.None);
        Assert.Null(await CheckAsync("olga", ConsoleRole.Operator));
    }

    public void Dispose()
    {
        _services.Dispose();
        Directory.Delete(_dir, recursive: true);
    }
}
