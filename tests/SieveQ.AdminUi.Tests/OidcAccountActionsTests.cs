using System.Security.Claims;
using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// Account changes by users of the sign-in provider, against the real controller: they have no local account, so the
/// store's re-check of the acting administrator is replaced by the check that the session is still the configured
/// provider's; a provider user's password is the provider's.
/// </summary>
public sealed class OidcAccountActionsTests : ConsoleTestContext
{
    private const string Authority = "https://idp.example/";

    private AccountActions Actions
    {
        get
        {
            if (!Services.Any(d => d.ServiceType == typeof(ConsoleConfig)))
            {
                Services.AddSingleton(new ConsoleConfig
                {
                    Url = "https://127.0.0.1:1",
                    Oidc = new ConsoleOidcConfig
                    {
                        DisplayName = "Test", Authority = Authority, ClientId = "c", ClientSecretFile = "s",
                        Roles = new Dictionary<string, string> { ["admins"] = "administrator" },
                    },
                });
            }
            return Services.GetRequiredService<AccountActions>();
        }
    }

    private static ClaimsPrincipal ProviderUser(string name, ConsoleRole role, string authority = Authority) =>
        new(new ClaimsIdentity(
        [
            new Claim(ClaimTypes.Name, OidcSignIn.NamePrefix + name), new Claim(ClaimTypes.Role, ConsolePolicies.RoleName(role)),
            new Claim(OidcSignIn.SourceClaim, OidcSignIn.SourceValue), new Claim(OidcSignIn.AuthorityClaim, authority),
        ], "Cookies"));

    [Fact]
    public async Task A_provider_administrator_creates_an_account_recorded_under_its_name_and_others_are_refused()
    {
        var created = await Actions.CreateAsync(ProviderUser("alice", ConsoleRole.Administrator), "newcomer", "viewer", CancellationToken.None);
        Assert.True(created.Done, created.Message);
        Assert.Equal("console user 'oidc:alice' created account 'newcomer'", Controller.Host.Audit.Tail(1).Single().Target);
        var before = Controller.Host.Audit.Tail(1).Single().Sequence;

        // A session from another provider than the configured one, and a provider operator: refused, nothing recorded.
        Assert.True((await Actions.CreateAsync(ProviderUser("alice", ConsoleRole.Administrator, "https://other.example/"), "second", "viewer", CancellationToken.None)).Refused);
        Assert.True((await Actions.SetDisabledAsync(ProviderUser("otto", ConsoleRole.Operator), "newcomer", true, CancellationToken.None)).Refused);
        Assert.Equal(before, Controller.Host.Audit.Tail(1).Single().Sequence);
    }

    [Fact]
    public async Task A_provider_user_is_refused_a_local_password_change()
    {
        var result = await Actions.ChangeOwnPasswordAsync(ProviderUser("alice", ConsoleRole.Viewer), "whatever-it-is", "a new long password", "a new long password", CancellationToken.None);
        Assert.True(result.Refused);
        Assert.Contains("provider", result.Message, StringComparison.Ordinal);
    }
}
