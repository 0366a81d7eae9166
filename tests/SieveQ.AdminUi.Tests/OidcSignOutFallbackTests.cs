using System.Net;
using SieveQ.AdminUi.Access;

namespace SieveQ.AdminUi.Tests;

/// <summary>A provider that names no end_session_endpoint (some have none): sign-out is the console's own, as before RP-initiated logout.</summary>
public sealed class OidcSignOutFallbackTests(OidcConsoleWithoutEndSession deployment) : IClassFixture<OidcConsoleWithoutEndSession>
{
    [Fact]
    public async Task Without_an_end_session_endpoint_sign_out_ends_the_console_session_and_goes_to_the_sign_in_page()
    {
        using var browser = OidcSignInTests.Browser(deployment);
        using var signedIn = await OidcSignInTests.SignInAsync(deployment, browser, "olga", "olga-password");
        Assert.Equal(HttpStatusCode.Redirect, signedIn.StatusCode);
        using var page = await browser.GetAsync(new Uri(deployment.Url, "/account/password"));
        Assert.Equal(HttpStatusCode.OK, page.StatusCode);
        var token = OidcSignInTests.AntiforgeryField().Match(await page.Content.ReadAsStringAsync()).Groups[1].Value;

        using var signOut = await browser.PostAsync(new Uri(deployment.Url, "/account/logout"),
            new FormUrlEncodedContent(new Dictionary<string, string> { ["__RequestVerificationToken"] = token }));
        Assert.Equal(HttpStatusCode.Redirect, signOut.StatusCode);
        Assert.Equal(AccountEndpoints.LoginPath, signOut.Headers.Location!.OriginalString);
        using var after = await browser.GetAsync(new Uri(deployment.Url, "/account/password"));
        Assert.Equal(HttpStatusCode.Redirect, after.StatusCode);
        Assert.Empty(deployment.Provider.EndSessions);
    }
}
