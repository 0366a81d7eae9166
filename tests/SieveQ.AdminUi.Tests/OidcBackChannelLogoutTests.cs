using System.Net;
using SieveQ.AdminUi.Access;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// Back-channel logout against the real console process and provider: logout tokens signed with the provider's key
/// end the session with their sid or every session of their subject; tokens the specification says to refuse change
/// nothing.
/// </summary>
public sealed partial class OidcSignInTests
{
    private async Task<HttpClient> SignedInAsync(string user)
    {
        var browser = Browser();
        using var signedIn = await SignInAsync(browser, user, $"{user}-password");
        Assert.Equal(HttpStatusCode.Redirect, signedIn.StatusCode);
        Assert.True(await StandsAsync(browser));
        return browser;
    }

    private async Task<bool> StandsAsync(HttpClient browser)
    {
        using var page = await browser.GetAsync(new Uri(deployment.Url, "/account/password"));
        return page.StatusCode == HttpStatusCode.OK;
    }

    private async Task<HttpResponseMessage> PostLogoutAsync(string token)
    {
        // The provider's own HTTP client: no cookie of any browser.
        using var provider = Browser();
        return await provider.PostAsync(new Uri(deployment.Url, BackChannelLogout.Path),
            new FormUrlEncodedContent(new Dictionary<string, string> { ["logout_token"] = token }));
    }

    [Fact]
    public async Task A_logout_token_from_the_provider_ends_the_session_it_names_or_every_session_of_its_subject()
    {
        using var laptop = await SignedInAsync("olga");
        using var desktop = await SignedInAsync("olga");
        using var victor = await SignedInAsync("victor");
        var sids = deployment.Provider.SessionsOf("olga").TakeLast(2).ToList();

        // The laptop's provider session ended there: the laptop's console session ends, the desktop's stands.
        using (var accepted = await PostLogoutAsync(deployment.Provider.LogoutToken("sieveq-console", "olga", sids[0])))
        {
            Assert.Equal(HttpStatusCode.OK, accepted.StatusCode);
            Assert.Contains("no-store", accepted.Headers.CacheControl?.ToString() ?? "", StringComparison.Ordinal);
        }
        Assert.False(await StandsAsync(laptop));
        Assert.True(await StandsAsync(desktop));

        // The same token again is a replay.
        var bySubject = deployment.Provider.LogoutToken("sieveq-console", "olga", null);
        using (var first = await PostLogoutAsync(bySubject))
        {
            Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        }
        using (var replay = await PostLogoutAsync(bySubject))
        {
            Assert.Equal(HttpStatusCode.BadRequest, replay.StatusCode);
        }
        // Without a sid: every session of olga's signed in before it, and no one else's.
        Assert.False(await StandsAsync(desktop));
        Assert.True(await StandsAsync(victor));
        // A sign-in after the logout is a new session.
        using var later = await SignedInAsync("olga");
        Assert.True(await StandsAsync(later));
    }

    public static TheoryData<string, string> RefusedTokens => new()
    {
        { "foreign-key", "no key of the provider signed it" },
        { "other-audience", "does not validate" },
        { "no-event", "no events claim" },
        { "nonce", "no nonce" },
        { "no-jti", "no jti" },
        { "no-subject-or-sid", "neither a sid nor a sub" },
        { "stale", "iat" },
        { "not-a-jwt", "does not validate" },
    };

    [Theory]
    [MemberData(nameof(RefusedTokens))]
    public async Task A_logout_token_the_specification_refuses_ends_nothing(string what, string expected)
    {
        using var browser = await SignedInAsync("ada");
        var sid = deployment.Provider.SessionsOf("ada")[^1];
        var p = deployment.Provider;
        var token = what switch
        {
            "foreign-key" => p.LogoutToken("sieveq-console", "ada", sid, foreignKey: true),
            "other-audience" => p.LogoutToken("another-client", "ada", sid),
            "no-event" => p.LogoutToken("sieveq-console", "ada", sid, c => c.Remove("events")),
            "nonce" => p.LogoutToken("sieveq-console", "ada", sid, c => c["nonce"] = "n-0S6_WzA2Mj"),
            "no-jti" => p.LogoutToken("sieveq-console", "ada", sid, c => c.Remove("jti")),
            "no-subject-or-sid" => p.LogoutToken("sieveq-console", null, null),
            "stale" => p.LogoutToken("sieveq-console", "ada", sid, issuedAt: DateTime.UtcNow.AddMinutes(-10), lifetime: TimeSpan.FromMinutes(20)),
            _ => "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZGEifQ.",
        };
        using var refused = await PostLogoutAsync(token);
        Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
        Assert.Contains(expected, await refused.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.True(await StandsAsync(browser));
    }
}
