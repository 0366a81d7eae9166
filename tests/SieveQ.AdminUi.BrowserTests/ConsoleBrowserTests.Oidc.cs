using System.Net;
using System.Text.RegularExpressions;
using Microsoft.Playwright;
using SieveQ.Tests.OpenIdProvider;

namespace SieveQ.AdminUi.BrowserTests;

/// <summary>
/// OpenID Connect sign-in in Chromium: a real provider (OpenIddict, on http://localhost, so another site than the
/// console) and the console's own process on https:// 127.0.0.1 with a certificate from `init-tls`. One browser
/// context goes through three provider users in turn: the first signs out at the console, the second is logged out by
/// the provider over the back channel.
/// </summary>
public sealed partial class ConsoleBrowserTests
{
    [Fact]
    public async Task Provider_users_sign_in_an_operator_s_change_is_audited_under_their_name_a_viewer_is_refused_and_an_unmapped_user_is_not_let_in()
    {
        const string secret = "browser-test-client-secret";
        var url = HttpsConsole.NewUrl();
        await using var provider = await TestOpenIdProvider.StartAsync(HttpsConsole.ClientId, secret, HttpsConsole.RedirectUri(url),
        [
            new TestProviderUser("olga", "olga-provider-password", ["staff", "sq-ops"]),
            new TestProviderUser("victor", "victor-provider-password", ["sq-view"]),
            new TestProviderUser("nobody", "nobody-provider-password", ["staff"]),
        ]);
        await using var console = await HttpsConsole.StartAsync(deployment.Directory, url, provider.Authority, secret,
            new Dictionary<string, string> { ["sq-ops"] = "operator", ["sq-view"] = "viewer" });

        // The console's certificate is self-signed (init-tls): accepted for this context only.
        var context = await deployment.Browser.NewContextAsync(new BrowserNewContextOptions { BaseURL = url.ToString(), IgnoreHTTPSErrors = true });
        var page = await context.NewPageAsync();
        async Task ProviderSignInAsync(string user, string password)
        {
            await page.GotoAsync("/account/login");
            await page.GetByRole(AriaRole.Link, new() { Name = "Sign in with Test provider" }).ClickAsync();
            try
            {
                await page.WaitForURLAsync(new Regex("^" + Regex.Escape(provider.Authority.ToString()) + "connect/authorize"));
            }
            catch (TimeoutException)
            {
                throw new InvalidOperationException($"the provider's page did not open for {user}: at {page.Url}: {await page.ContentAsync()}\n{console.Output}");
            }
            await page.GetByLabel("Provider user").FillAsync(user);
            await page.GetByLabel("Provider password").FillAsync(password);
            await page.GetByRole(AriaRole.Button, new() { Name = "Continue" }).ClickAsync();
        }

        await ProviderSignInAsync("olga", "olga-provider-password");
        // Back through /signin-oidc and the landing page to the overview, with the Strict session cookie sent.
        await page.WaitForURLAsync(new Regex("^" + Regex.Escape(url.ToString()) + "$"), new() { Timeout = 30_000 });
        await Assertions.Expect(page.GetByTestId("signed-in-as")).ToContainTextAsync("oidc:olga (operator)");
        await ScreenshotAsync(page, "oidc-signed-in");
        await page.GotoAsync("/senders");
        await InteractiveAsync(page);
        await page.GetByLabel("Reason (recorded in the audit log)").FillAsync("oidc browser test");
        // Readmitting a sender that is not quarantined changes nothing and is still recorded.
        await page.GetByRole(AriaRole.Button, new() { Name = "Readmit sender 2" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("readmit of sender 2 recorded in the audit log", new() { Timeout = 40_000 });
        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        var row = page.GetByTestId("audit").Locator("tr", new() { HasText = "oidc browser test" }).First;
        await Assertions.Expect(row).ToContainTextAsync("console user 'oidc:olga' from 127.0.0.1: oidc browser test");
        await Assertions.Expect(row).ToContainTextAsync("sender 2");
        await page.GetByRole(AriaRole.Button, new() { Name = "Sign out" }).ClickAsync();
        // Through the provider's end-session endpoint (with olga's ID token as the hint) and back.
        await page.WaitForURLAsync(new Regex("/account/login"));
        Assert.Equal(["subject-olga"], provider.EndSessions);
        var signedOut = await context.APIRequest.GetAsync("/", new() { MaxRedirects = 0 });
        Assert.Equal((int)HttpStatusCode.Redirect, signedOut.Status);

        await ProviderSignInAsync("victor", "victor-provider-password");
        await page.WaitForURLAsync(new Regex("^" + Regex.Escape(url.ToString()) + "$"), new() { Timeout = 30_000 });
        await Assertions.Expect(page.GetByTestId("signed-in-as")).ToContainTextAsync("oidc:victor (viewer)");
        await page.GotoAsync("/senders");
        await InteractiveAsync(page);
        await page.GetByRole(AriaRole.Button, new() { Name = "Quarantine sender 2" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("refused");
        var token = await page.Locator("form[action='/account/logout'] input[name='__RequestVerificationToken']").GetAttributeAsync("value");
        var direct = await context.APIRequest.PostAsync("/api/senders/2/quarantine", new() { Form = FormWith(context.APIRequest, ("reason", "direct"), ("__RequestVerificationToken", token!)), MaxRedirects = 0 });
        Assert.Equal((int)HttpStatusCode.Forbidden, direct.Status);
        // Victor's session ends at the provider, which says so over the back channel (a logout token with his sid,
        // posted from outside the browser): his open page is signed out by the console's periodic check (10 s).
        var providerSide = await deployment.Browser.NewContextAsync(new BrowserNewContextOptions { BaseURL = url.ToString(), IgnoreHTTPSErrors = true });
        var logoutToken = provider.LogoutToken(HttpsConsole.ClientId, "victor", provider.SessionsOf("victor")[^1]);
        var logout = await providerSide.APIRequest.PostAsync("/signout-oidc-backchannel",
            new() { Form = FormWith(providerSide.APIRequest, ("logout_token", logoutToken)), MaxRedirects = 0 });
        Assert.Equal((int)HttpStatusCode.OK, logout.Status);
        await providerSide.CloseAsync();
        await page.WaitForURLAsync(new Regex("/account/login"), new() { Timeout = 40_000 });
        var ended = await context.APIRequest.GetAsync("/", new() { MaxRedirects = 0 });
        Assert.Equal((int)HttpStatusCode.Redirect, ended.Status);
        Assert.Equal(["subject-olga"], provider.EndSessions);

        await ProviderSignInAsync("nobody", "nobody-provider-password");
        await page.WaitForURLAsync(new Regex("/account/login\\?error=oidc$"), new() { Timeout = 30_000 });
        await Assertions.Expect(page.GetByTestId("login-error")).ToContainTextAsync("has no console role");
        await ScreenshotAsync(page, "oidc-refused");
        var refused = await context.APIRequest.GetAsync("/", new() { MaxRedirects = 0 });
        Assert.Equal((int)HttpStatusCode.Redirect, refused.Status);
        await context.CloseAsync();
        Assert.DoesNotContain(secret, console.Output, StringComparison.Ordinal);
    }
}
