using System.Net;
using System.Text.RegularExpressions;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;
using SieveQ.Tests.OpenIdProvider;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// The OpenID Connect sign-in over HTTP, step by step as a browser takes it: the real console on https:// and the
/// test provider (OpenIddict, real signed ID tokens) on loopback. The browser tests do the same in Chromium with an
/// audited change; these check each hop: PKCE and nonce in the request, the session's name and role, the role
/// policies, refusal without a mapped role, a tampered answer refused, sign-out.
/// </summary>
public sealed partial class OidcSignInTests(OidcConsole deployment) : IClassFixture<OidcConsole>
{
    /// <summary>A browser's jar, trusting the console's generated certificate (by its exact bytes) and nothing else over TLS.</summary>
    private HttpClient Browser() => Browser(deployment);

    private Task<HttpResponseMessage> SignInAsync(HttpClient browser, string user, string password, Func<Dictionary<string, string>, Dictionary<string, string>>? tamper = null) =>
        SignInAsync(deployment, browser, user, password, tamper);

    internal static HttpClient Browser(OidcConsole deployment)
    {
        var certificate = File.ReadAllText(Path.Combine(deployment.Directory, "keys", ConsoleTls.GeneratedFileStem + ".crt"));
        using var trusted = System.Security.Cryptography.X509Certificates.X509Certificate2.CreateFromPem(certificate);
        var thumbprint = trusted.Thumbprint;
        return new HttpClient(new HttpClientHandler
        {
            AllowAutoRedirect = false,
            CookieContainer = new CookieContainer(),
            ServerCertificateCustomValidationCallback = (_, presented, _, _) => presented?.Thumbprint == thumbprint,
        });
    }

    /// <summary>From "Sign in with" to the provider's answer posted back to the console; returns that post's response.</summary>
    internal static async Task<HttpResponseMessage> SignInAsync(OidcConsole deployment, HttpClient browser, string user, string password,
        Func<Dictionary<string, string>, Dictionary<string, string>>? tamper = null)
    {
        using var start = await browser.GetAsync(new Uri(deployment.Url, OidcSignIn.LoginPath + "?returnUrl=%2Faccount%2Fpassword"));
        Assert.Equal(HttpStatusCode.Redirect, start.StatusCode);
        var authorize = start.Headers.Location!;
        Assert.StartsWith(new Uri(deployment.Provider.Authority, "connect/authorize").ToString(), authorize.ToString(), StringComparison.Ordinal);
        var query = System.Web.HttpUtility.ParseQueryString(authorize.Query);
        Assert.Equal("code", query["response_type"]);
        Assert.Equal("S256", query["code_challenge_method"]);
        Assert.False(string.IsNullOrEmpty(query["code_challenge"]));
        Assert.False(string.IsNullOrEmpty(query["nonce"]));
        Assert.Equal(new Uri(deployment.Url, "/signin-oidc").ToString(), query["redirect_uri"]);

        using var loginPage = await browser.GetAsync(authorize);
        var (action, fields) = Form(await loginPage.Content.ReadAsStringAsync());
        fields["username"] = user;
        fields["password"] = password;
        using var login = await browser.PostAsync(new Uri(deployment.Provider.Authority, action), new FormUrlEncodedContent(fields));
        // The provider answers with a page that posts the code to the console (response_mode=form_post).
        var (callback, answer) = Form(await login.Content.ReadAsStringAsync());
        Assert.Equal(new Uri(deployment.Url, "/signin-oidc").ToString(), callback);
        Assert.True(answer.ContainsKey("code"), string.Join(", ", answer.Keys));
        return await browser.PostAsync(new Uri(callback), new FormUrlEncodedContent(tamper is null ? answer : tamper(answer)));
    }

    [Fact]
    public async Task An_operator_from_the_provider_gets_a_session_with_the_operator_role_and_signs_out()
    {
        using var browser = Browser();
        using var signedIn = await SignInAsync(browser, "olga", "olga-password");
        Assert.Equal(HttpStatusCode.Redirect, signedIn.StatusCode);
        Assert.StartsWith("/account/oidc/return", signedIn.Headers.Location!.OriginalString, StringComparison.Ordinal);
        var session = signedIn.Headers.GetValues("Set-Cookie").Single(c => c.StartsWith("sieveq-console=", StringComparison.Ordinal));
        Assert.Contains("secure", session, StringComparison.OrdinalIgnoreCase);
        Assert.Contains("samesite=strict", session, StringComparison.OrdinalIgnoreCase);

        // The landing page moves on by itself to the page asked for.
        using var landing = await browser.GetAsync(new Uri(deployment.Url, signedIn.Headers.Location.OriginalString));
        Assert.Contains("url=/account/password", await landing.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        using var page = await browser.GetAsync(new Uri(deployment.Url, "/account/password"));
        Assert.Equal(HttpStatusCode.OK, page.StatusCode);
        Assert.Contains("oidc:olga (operator)", WebUtility.HtmlDecode(await page.Content.ReadAsStringAsync()), StringComparison.Ordinal);
        // The administrator policy refuses an operator, as for a local account.
        using var accounts = await browser.GetAsync(new Uri(deployment.Url, "/accounts"));
        Assert.Equal(HttpStatusCode.Redirect, accounts.StatusCode);
        Assert.Equal("/denied", accounts.Headers.Location!.AbsolutePath);

        // Sign-out ends the console session, then the provider's (RP-initiated logout): the console's own page moves
        // on to the end-session endpoint with olga's ID token as the hint, and the provider sends the browser back to
        // the console's sign-out callback, which ends on the sign-in page.
        var endedBefore = deployment.Provider.EndSessions.Count;
        var token = AntiforgeryField().Match(await page.Content.ReadAsStringAsync()).Groups[1].Value;
        using var signOut = await browser.PostAsync(new Uri(deployment.Url, "/account/logout"),
            new FormUrlEncodedContent(new Dictionary<string, string> { ["__RequestVerificationToken"] = token }));
        Assert.Equal(HttpStatusCode.OK, signOut.StatusCode);
        Assert.Contains(signOut.Headers.GetValues("Set-Cookie"), c => c.StartsWith("sieveq-console=;", StringComparison.Ordinal));
        using var after = await browser.GetAsync(new Uri(deployment.Url, "/account/password"));
        Assert.Equal(HttpStatusCode.Redirect, after.StatusCode);
        Assert.StartsWith(AccountEndpoints.LoginPath, after.Headers.Location!.AbsolutePath, StringComparison.Ordinal);

        var endSession = new Uri(WebUtility.HtmlDecode(MetaRefresh().Match(await signOut.Content.ReadAsStringAsync()).Groups[1].Value));
        Assert.StartsWith(new Uri(deployment.Provider.Authority, "connect/endsession").ToString(), endSession.ToString(), StringComparison.Ordinal);
        var query = System.Web.HttpUtility.ParseQueryString(endSession.Query);
        Assert.False(string.IsNullOrEmpty(query["id_token_hint"]));
        Assert.Equal(new Uri(deployment.Url, OidcSignIn.SignedOutCallbackPath).ToString(), query["post_logout_redirect_uri"]);
        using var atProvider = await browser.GetAsync(endSession);
        Assert.Equal(HttpStatusCode.Redirect, atProvider.StatusCode);
        Assert.Equal(["subject-olga"], deployment.Provider.EndSessions.Skip(endedBefore));
        var back = atProvider.Headers.Location!;
        Assert.StartsWith(new Uri(deployment.Url, OidcSignIn.SignedOutCallbackPath).ToString(), back.ToString(), StringComparison.Ordinal);
        using var callback = await browser.GetAsync(back);
        Assert.Equal(HttpStatusCode.Redirect, callback.StatusCode);
        Assert.Equal(AccountEndpoints.LoginPath, callback.Headers.Location!.OriginalString);

        // A way back whose state the console did not protect sends nobody anywhere (no open redirect).
        using var forged = await browser.GetAsync(new Uri(deployment.Url, OidcSignIn.SignedOutCallbackPath + "?state=forged"));
        Assert.Null(forged.Headers.Location);
    }

    [Fact]
    public async Task A_viewer_is_refused_operator_endpoints_and_a_user_without_a_mapped_role_is_refused_sign_in()
    {
        using (var browser = Browser())
        {
            using var signedIn = await SignInAsync(browser, "victor", "victor-password");
            Assert.Equal(HttpStatusCode.Redirect, signedIn.StatusCode);
            using var page = await browser.GetAsync(new Uri(deployment.Url, "/account/password"));
            var html = await page.Content.ReadAsStringAsync();
            Assert.Contains("oidc:victor (viewer)", WebUtility.HtmlDecode(html), StringComparison.Ordinal);
            var token = AntiforgeryField().Match(html).Groups[1].Value;
            using var quarantine = await browser.PostAsync(new Uri(deployment.Url, "/api/senders/1/quarantine"),
                new FormUrlEncodedContent(new Dictionary<string, string> { ["reason"] = "direct", ["__RequestVerificationToken"] = token }));
            Assert.Equal(HttpStatusCode.Forbidden, quarantine.StatusCode);
        }
        using (var browser = Browser())
        {
            using var refused = await SignInAsync(browser, "nobody", "nobody-password");
            Assert.Equal(HttpStatusCode.Redirect, refused.StatusCode);
            Assert.Equal(AccountEndpoints.LoginPath + "?error=oidc", refused.Headers.Location!.OriginalString);
            Assert.DoesNotContain(refused.Headers.TryGetValues("Set-Cookie", out var cookies) ? cookies : [], c => c.StartsWith("sieveq-console=", StringComparison.Ordinal));
            using var home = await browser.GetAsync(new Uri(deployment.Url, "/"));
            Assert.Equal(HttpStatusCode.Redirect, home.StatusCode);
            using var login = await browser.GetAsync(new Uri(deployment.Url, AccountEndpoints.LoginPath + "?error=oidc"));
            var html = WebUtility.HtmlDecode(await login.Content.ReadAsStringAsync());
            Assert.Contains("Sign in with Test provider", html, StringComparison.Ordinal);
            Assert.Contains("has no console role", html, StringComparison.Ordinal);
            Assert.DoesNotContain("the-client-secret", html, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task A_pre_sqs_start_stop_and_replace_and_replica_recoveries_are_posted_only_by_an_administrator()
    {
        foreach (var (user, allowed) in new[] { ("victor", false), ("olga", false), ("ada", true) })
        {
            using var browser = Browser();
            using var signedIn = await SignInAsync(browser, user, $"{user}-password");
            Assert.Equal(HttpStatusCode.Redirect, signedIn.StatusCode);
            using var page = await browser.GetAsync(new Uri(deployment.Url, "/account/password"));
            var token = AntiforgeryField().Match(await page.Content.ReadAsStringAsync()).Groups[1].Value;
            foreach (var path in new[] { "/api/pre-sqs/1/start", "/api/pre-sqs/1/stop", "/api/pre-sqs/1/replace", "/api/replicas/0/recover", "/api/replicas/recover-round" })
            {
                using var post = await browser.PostAsync(new Uri(deployment.Url, path),
                    new FormUrlEncodedContent(new Dictionary<string, string> { ["reason"] = "direct", ["__RequestVerificationToken"] = token }));
                if (!allowed)
                {
                    Assert.Equal(HttpStatusCode.Forbidden, post.StatusCode);
                    continue;
                }
                // Past the role check to the action: this console's controller is not running, which the answer says.
                Assert.Equal(HttpStatusCode.BadRequest, post.StatusCode);
                Assert.Contains("the controller refused or did not answer", await post.Content.ReadAsStringAsync(), StringComparison.Ordinal);
            }
            if (allowed)
            {
                using var outside = await browser.PostAsync(new Uri(deployment.Url, "/api/pre-sqs/9/replace"),
                    new FormUrlEncodedContent(new Dictionary<string, string> { ["reason"] = "direct", ["__RequestVerificationToken"] = token }));
                Assert.Equal(HttpStatusCode.BadRequest, outside.StatusCode);
                Assert.Contains("there is no pre-SQ 9 in this deployment", await outside.Content.ReadAsStringAsync(), StringComparison.Ordinal);
                using var noReplica = await browser.PostAsync(new Uri(deployment.Url, "/api/replicas/9/recover"),
                    new FormUrlEncodedContent(new Dictionary<string, string> { ["reason"] = "direct", ["__RequestVerificationToken"] = token }));
                Assert.Equal(HttpStatusCode.BadRequest, noReplica.StatusCode);
                Assert.Contains("there is no replica-SQ 9 in this deployment", await noReplica.Content.ReadAsStringAsync(), StringComparison.Ordinal);
            }
        }
    }

    [Fact]
    public async Task A_replayed_or_tampered_answer_is_refused()
    {
        using var browser = Browser();
        // The state names this browser's correlation cookie; another value is refused.
        using var tampered = await SignInAsync(browser, "olga", "olga-password", a => new Dictionary<string, string>(a) { ["state"] = a["state"][..^4] + "AAAA" });
        Assert.Equal(AccountEndpoints.LoginPath + "?error=oidc", tampered.Headers.Location!.OriginalString);
        // A code answered to one browser, posted from another (no correlation or nonce cookie there), is refused.
        Dictionary<string, string>? stolen = null;
        using (await SignInAsync(browser, "olga", "olga-password", a => { stolen = a; return new Dictionary<string, string>(); }))
        {
        }
        using var attacker = Browser();
        using var replay = await attacker.PostAsync(new Uri(deployment.Url, OidcSignIn.CallbackPath), new FormUrlEncodedContent(stolen!));
        Assert.Equal(AccountEndpoints.LoginPath + "?error=oidc", replay.Headers.Location!.OriginalString);
        Assert.False(replay.Headers.TryGetValues("Set-Cookie", out var cookies) && cookies.Any(c => c.StartsWith("sieveq-console=", StringComparison.Ordinal)));
    }

    /// <summary>The first form of a page: its action and its inputs' names and values.</summary>
    private static (string Action, Dictionary<string, string> Fields) Form(string html)
    {
        var action = WebUtility.HtmlDecode(FormAction().Match(html).Groups[1].Value);
        var fields = new Dictionary<string, string>();
        foreach (Match input in Input().Matches(html))
        {
            var name = NameAttribute().Match(input.Value);
            if (name.Success && TypeHidden().IsMatch(input.Value))
            {
                fields[WebUtility.HtmlDecode(name.Groups[1].Value)] = WebUtility.HtmlDecode(ValueAttribute().Match(input.Value).Groups[1].Value);
            }
        }
        return (action, fields);
    }

    [GeneratedRegex("<meta http-equiv=\"refresh\" content=\"0;url=([^\"]+)\"")]
    private static partial Regex MetaRefresh();

    [GeneratedRegex("<form[^>]*action=\"([^\"]+)\"")]
    private static partial Regex FormAction();

    [GeneratedRegex("<input[^>]*>")]
    private static partial Regex Input();

    [GeneratedRegex("name=\"([^\"]+)\"")]
    private static partial Regex NameAttribute();

    [GeneratedRegex("value=\"([^\"]*)\"")]
    private static partial Regex ValueAttribute();

    [GeneratedRegex("type=\"hidden\"")]
    private static partial Regex TypeHidden();

    [GeneratedRegex("name=\"__RequestVerificationToken\"[^>]*value=\"([^\"]+)\"")]
    internal static partial Regex AntiforgeryField();
}
