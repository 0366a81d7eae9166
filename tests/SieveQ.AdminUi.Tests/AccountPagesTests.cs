using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.Transport;

namespace SieveQ.AdminUi.Tests;

/// <summary>The password change and the accounts page, every change recorded by the real controller before it is made.</summary>
public sealed class AccountPagesTests : ConsoleTestContext
{
    private AccountActions Actions => Services.GetRequiredService<AccountActions>();

    private static async Task<System.Security.Claims.ClaimsPrincipal> As(string name, ConsoleRole role) => (await SignedIn(name, role)).User;

    private async Task<LoginOutcome> SignInAsync(string name, string password) => (await Users.CheckAsync(name, password, CancellationToken.None)).Outcome;

    [Fact]
    public async Task A_user_changes_their_own_password_with_the_current_one_and_the_controller_records_it()
    {
        var page = Render<Password>(p => p.AddCascadingValue(SignedIn("vera", ConsoleRole.Viewer)));
        page.Find("#current-password").Input(Passwords["vera"]);
        page.Find("#new-password").Input("correct horse battery");
        page.Find("#confirm-password").Input("correct horse battery");
        await page.Find("[data-testid=change-password]").ClickAsync(new());
        page.WaitForAssertion(() => Assert.StartsWith("password changed; recorded in the audit log", page.Find("[data-testid=password-result]").TextContent.Trim(), StringComparison.Ordinal));
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("console-change-password", last.Action);
        Assert.Equal("console user 'vera' from 192.0.2.7 changed their own password", last.Target);
        Assert.Contains("(console, operator)", last.Actor, StringComparison.Ordinal);
        Assert.DoesNotContain("correct horse", last.Target + last.Outcome, StringComparison.Ordinal);
        Assert.Equal(LoginOutcome.Accepted, await SignInAsync("vera", "correct horse battery"));
        Assert.Equal(LoginOutcome.Refused, await SignInAsync("vera", Passwords["vera"]));
    }

    [Fact]
    public async Task A_wrong_current_password_changes_nothing_and_counts_towards_the_lockout()
    {
        var before = Controller.Host.Audit.LastSequence;
        var vera = await As("vera", ConsoleRole.Viewer);
        for (var i = 0; i < 3; i++)
        {
            var result = await Actions.ChangeOwnPasswordAsync(vera, "not the password", "correct horse battery", "correct horse battery", CancellationToken.None);
            Assert.True(result.Refused);
        }
        // Three failures (the test's maxFailedLogins): locked even against the right password, at sign-in and here.
        Assert.Equal(LoginOutcome.LockedOut, await SignInAsync("vera", Passwords["vera"]));
        Assert.True((await Actions.ChangeOwnPasswordAsync(vera, Passwords["vera"], "correct horse battery", "correct horse battery", CancellationToken.None)).Refused);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Theory]
    [InlineData("short", "short", "12 to 256 characters")]
    [InlineData("correct horse battery", "correct horse batterY", "confirmation differ")]
    [InlineData("VERAvera", "VERAvera", "12 to 256 characters")]
    [InlineData("verylongname", "verylongname", "not the user name")]
    [InlineData("tab\tin the password", "tab\tin the password", "no control characters")]
    public async Task A_new_password_against_the_rule_is_refused_before_anything_is_checked_or_recorded(string replacement, string confirmation, string why)
    {
        Passwords["verylongname"] = await Users.AddAsync("verylongname", ConsoleRole.Viewer, CancellationToken.None);
        var before = Controller.Host.Audit.LastSequence;
        var result = await Actions.ChangeOwnPasswordAsync(await As("verylongname", ConsoleRole.Viewer), Passwords["verylongname"], replacement, confirmation, CancellationToken.None);
        Assert.False(result.Done);
        Assert.Contains(why, result.Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        Assert.Equal(LoginOutcome.Accepted, await SignInAsync("verylongname", Passwords["verylongname"]));
    }

    [Fact]
    public async Task An_administrator_creates_an_account_whose_generated_password_is_shown_once_and_works()
    {
        var page = Render<Accounts>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        page.Find("#new-account").Input("nina");
        page.Find("#new-role").Change("operator");
        await page.Find("[data-testid=create-account]").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("account 'nina' created (operator)", page.Find("[data-testid=account-result]").TextContent, StringComparison.Ordinal));
        var password = page.Find("[data-testid=new-account-password]").TextContent;
        Assert.Equal(LoginOutcome.Accepted, await SignInAsync("nina", password));
        Assert.Equal(ConsoleRole.Operator, (await Users.FindAsync("nina", CancellationToken.None))!.Role);
        Assert.Contains("operator", page.Find("[data-testid=account-nina]").TextContent, StringComparison.Ordinal);
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal(("console-create-account", "console user 'admin' from 192.0.2.7 created account 'nina'", "created with role operator"), (last.Action, last.Target, last.Outcome));
        Assert.DoesNotContain(password, await File.ReadAllTextAsync(Path.Combine(Controller.Directory, "users.json")), StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_administrators_reset_gives_a_generated_password_shown_once_clears_the_lockout_and_ends_every_session()
    {
        var stored = (await Users.FindAsync("vera", CancellationToken.None))!;
        var session = new System.Security.Claims.ClaimsPrincipal(new System.Security.Claims.ClaimsIdentity(
        [
            new System.Security.Claims.Claim(System.Security.Claims.ClaimTypes.Name, "vera"),
            new System.Security.Claims.Claim(System.Security.Claims.ClaimTypes.Role, "viewer"),
            new System.Security.Claims.Claim(SessionStanding.PasswordStampType, SessionStanding.PasswordStampOf(stored)),
            new System.Security.Claims.Claim(SessionStanding.SessionIdType, SessionStanding.NewSessionId()),
        ], "Cookies"));
        Assert.True(await SessionStanding.StandsAsync(session, Users, null, null, null, CancellationToken.None));
        for (var i = 0; i < 3; i++)
        {
            await SignInAsync("vera", "a wrong password!");
        }
        Assert.Equal(LoginOutcome.LockedOut, await SignInAsync("vera", Passwords["vera"]));

        var page = Render<Accounts>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        await page.Find("button[aria-label='Reset password of vera']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("password of 'vera' reset, every session of it ended", page.Find("[data-testid=account-result]").TextContent, StringComparison.Ordinal));
        var password = page.Find("[data-testid=new-account-password]").TextContent;
        Assert.Equal(LoginOutcome.Accepted, await SignInAsync("vera", password));
        Assert.False(await SessionStanding.StandsAsync(session, Users, null, null, null, CancellationToken.None));
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal(("console-reset-password", "console user 'admin' from 192.0.2.7 reset the password of account 'vera'"), (last.Action, last.Target));
        Assert.DoesNotContain(password, last.Target + last.Outcome, StringComparison.Ordinal);

        // Not for the administrator's own account: that is the password page's (a reset would end the asking session).
        var before = Controller.Host.Audit.LastSequence;
        var own = await Actions.ResetPasswordAsync(await As("admin", ConsoleRole.Administrator), "admin", CancellationToken.None);
        Assert.False(own.Done);
        Assert.Contains("your own password", own.Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task An_administrator_disables_an_account_and_sets_a_role_both_recorded()
    {
        var page = Render<Accounts>(p => p.AddCascadingValue(SignedIn("admin", ConsoleRole.Administrator)));
        await page.Find("button[aria-label='Disable olga']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("disabled", page.Find("[data-testid=account-olga]").TextContent, StringComparison.Ordinal));
        Assert.Equal(LoginOutcome.Refused, await SignInAsync("olga", Passwords["olga"]));
        Assert.Equal("console-disable-account", Controller.Host.Audit.Tail(1).Single().Action);
        page.Find("select[aria-label='Role for vera']").Change("administrator");
        await page.Find("button[aria-label='Set role of vera']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("account 'vera' is now administrator", page.Find("[data-testid=account-result]").TextContent, StringComparison.Ordinal));
        Assert.Equal(ConsoleRole.Administrator, (await Users.FindAsync("vera", CancellationToken.None))!.Role);
        Assert.Equal(("console-set-role", "role viewer -> administrator"), (Controller.Host.Audit.Tail(1).Single().Action, Controller.Host.Audit.Tail(1).Single().Outcome));
        await page.Find("button[aria-label='Enable olga']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Equal(LoginOutcome.Accepted, SignInAsync("olga", Passwords["olga"]).GetAwaiter().GetResult()));
    }

    [Theory]
    [InlineData("olga", ConsoleRole.Operator)]
    [InlineData("vera", ConsoleRole.Viewer)]
    public async Task A_non_administrator_is_refused_every_account_change_on_the_server_and_nothing_is_recorded(string name, ConsoleRole role)
    {
        var before = Controller.Host.Audit.LastSequence;
        var user = await As(name, role);
        Assert.True((await Actions.CreateAsync(user, "mallory", "administrator", CancellationToken.None)).Refused);
        Assert.True((await Actions.SetDisabledAsync(user, "admin", true, CancellationToken.None)).Refused);
        Assert.True((await Actions.SetDisabledAsync(user, "olga", false, CancellationToken.None)).Refused);
        Assert.True((await Actions.SetRoleAsync(user, name, "administrator", CancellationToken.None)).Refused);
        Assert.True((await Actions.ResetPasswordAsync(user, "admin", CancellationToken.None)).Refused);
        // Through the page's own handler as well (the page's policy would not even show it to them).
        var page = Render<Accounts>(p => p.AddCascadingValue(SignedIn(name, role)));
        page.Find("#new-account").Input("mallory");
        await page.Find("[data-testid=create-account]").ClickAsync(new());
        page.WaitForAssertion(() => Assert.StartsWith("refused: create account needs the administrator role", page.Find("[data-testid=account-result]").TextContent.Trim(), StringComparison.Ordinal));
        Assert.Null(await Users.FindAsync("mallory", CancellationToken.None));
        Assert.Equal(ConsoleRole.Administrator, (await Users.FindAsync("admin", CancellationToken.None))!.Role);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task An_administrator_demoted_since_sign_in_is_refused_though_the_session_still_says_administrator()
    {
        await Users.SetRoleAsync("vera", ConsoleRole.Administrator, CancellationToken.None);
        var stale = await As("vera", ConsoleRole.Administrator);
        await Users.SetRoleAsync("vera", ConsoleRole.Viewer, CancellationToken.None);
        Assert.True((await Actions.CreateAsync(stale, "mallory", "viewer", CancellationToken.None)).Refused);
    }

    [Theory]
    [InlineData("nina", "superuser", "the role is viewer, operator or administrator")]
    [InlineData("nina", "3", "the role is viewer, operator or administrator")]
    [InlineData("<script>", "viewer", "a user name is 1-64 characters")]
    [InlineData("olga", "viewer", "user 'olga' exists already")]
    public async Task Malformed_account_requests_are_refused_before_the_controller(string account, string role, string why)
    {
        var before = Controller.Host.Audit.LastSequence;
        var admin = await As("admin", ConsoleRole.Administrator);
        var result = await Actions.CreateAsync(admin, account, role, CancellationToken.None);
        Assert.False(result.Done);
        Assert.False(result.Refused);
        Assert.Contains(why, result.Message, StringComparison.Ordinal);
        Assert.Contains("not changed", (await Actions.SetRoleAsync(admin, "olga", role == "viewer" ? "root" : role, CancellationToken.None)).Message, StringComparison.Ordinal);
        Assert.Contains("no such account", (await Actions.SetDisabledAsync(admin, "nobody", true, CancellationToken.None)).Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        Assert.Equal(ConsoleRole.Operator, (await Users.FindAsync("olga", CancellationToken.None))!.Role);
    }

    [Fact]
    public async Task The_last_enabled_administrator_cannot_be_disabled_or_demoted()
    {
        var before = Controller.Host.Audit.LastSequence;
        var admin = await As("admin", ConsoleRole.Administrator);
        Assert.Contains("no enabled administrator", (await Actions.SetDisabledAsync(admin, "admin", true, CancellationToken.None)).Message, StringComparison.Ordinal);
        Assert.Contains("no enabled administrator", (await Actions.SetRoleAsync(admin, "admin", "operator", CancellationToken.None)).Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        Assert.Equal(LoginOutcome.Accepted, await SignInAsync("admin", Passwords["admin"]));
    }

    [Fact]
    public async Task The_controller_records_only_the_console_changes_it_knows()
    {
        var before = Controller.Host.Audit.LastSequence;
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => Controller.Gateway.RecordConsoleChangeAsync("quarantine-sender", "sender 1", "applied", CancellationToken.None));
        Assert.Equal(GrpcStatusCode.InvalidArgument, e.Status);
        await Assert.ThrowsAsync<GrpcCallException>(() => Controller.Gateway.RecordConsoleChangeAsync("console-set-role", "", "x", CancellationToken.None));
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }
}
