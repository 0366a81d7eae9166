using System.Security.Claims;
using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// Account changes by Windows-signed-in users, against the real controller: they have no local account, so the
/// acting administrator is re-checked against console.json's mapping (the entry that gave the role must still give
/// it), and a Windows user's password is Windows'.
/// </summary>
public sealed class WindowsAccountActionsTests : ConsoleTestContext
{
    private static readonly WindowsSignInConfig Mapping = new()
    {
        Principals = new() { ["alice@EXAMPLE.COM"] = "administrator", ["otto@EXAMPLE.COM"] = "operator" },
    };

    private AccountActions Actions
    {
        get
        {
            if (!Services.Any(d => d.ServiceType == typeof(ConsoleConfig)))
            {
                Services.AddSingleton(new ConsoleConfig { Url = "https://127.0.0.1:1", WindowsSignIn = Mapping });
            }
            return Services.GetRequiredService<AccountActions>();
        }
    }

    private static ClaimsPrincipal WindowsUser(string principal, ConsoleRole role) =>
        new(new ClaimsIdentity(
        [
            new Claim(ClaimTypes.Name, "kerberos:" + principal), new Claim(ClaimTypes.Role, ConsolePolicies.RoleName(role)),
            new Claim(ClaimTypes.AuthenticationMethod, NegotiateSignIn.Method), new Claim(NegotiateSignIn.MappedByClaim, "principal:" + principal),
            new Claim(BrowserAddressClaim.Type, BrowserAddress),
        ], "Cookies"));

    [Fact]
    public async Task A_windows_administrator_manages_accounts_while_the_mapping_still_makes_it_one()
    {
        var created = await Actions.CreateAsync(WindowsUser("alice@EXAMPLE.COM", ConsoleRole.Administrator), "newcomer", "viewer", CancellationToken.None);
        Assert.True(created.Done, created.Message);
        Assert.Equal($"console user 'kerberos:alice@EXAMPLE.COM' from {BrowserAddress} created account 'newcomer'", Controller.Host.Audit.Tail(1).Single().Target);
        var disabled = await Actions.SetDisabledAsync(WindowsUser("alice@EXAMPLE.COM", ConsoleRole.Administrator), "newcomer", true, CancellationToken.None);
        Assert.True(disabled.Done, disabled.Message);
        var before = Controller.Host.Audit.Tail(1).Single().Sequence;

        // A session claiming administrator whose mapping entry gives operator, and a Windows operator: refused, nothing recorded.
        Assert.True((await Actions.SetDisabledAsync(WindowsUser("otto@EXAMPLE.COM", ConsoleRole.Administrator), "newcomer", false, CancellationToken.None)).Refused);
        Assert.True((await Actions.SetDisabledAsync(WindowsUser("otto@EXAMPLE.COM", ConsoleRole.Operator), "newcomer", false, CancellationToken.None)).Refused);
        Assert.Equal(before, Controller.Host.Audit.Tail(1).Single().Sequence);
    }

    [Fact]
    public async Task A_windows_user_is_refused_a_local_password_change()
    {
        var result = await Actions.ChangeOwnPasswordAsync(WindowsUser("otto@EXAMPLE.COM", ConsoleRole.Operator), "whatever-it-is", "a new long password", "a new long password", CancellationToken.None);
        Assert.True(result.Refused);
        Assert.Contains("Windows", result.Message, StringComparison.Ordinal);
    }
}
