using System.Net;
using System.Text.RegularExpressions;
using Microsoft.Playwright;

namespace SieveQ.AdminUi.BrowserTests;

/// <summary>
/// Windows sign-in (Negotiate, Kerberos) against a real MIT KDC on loopback: Chromium with each user's tickets signs in
/// with no password, and .NET's own Negotiate client (GSSAPI with a KRB5CCNAME cache) reaches the endpoint.
/// </summary>
public sealed class KerberosSignInTests(KerberosConsole console) : IClassFixture<KerberosConsole>
{
    [Fact]
    public async Task A_browser_with_tickets_signs_in_without_a_password_and_the_mapping_gives_each_principal_its_role()
    {
        // One Chromium for the three users. Its Kerberos library reads the cache named by KRB5CCNAME at each
        // handshake, so each user's tickets are copied into that one cache before that user's sign-in.
        var cache = console.Realm.CacheOf("browser");
        using var playwright = await Playwright.CreateAsync();
        var env = console.Realm.Environment();
        env["KRB5CCNAME"] = cache;
        // A regular (persistent) profile: Chromium offers Kerberos only there by default, not in incognito-like contexts.
        // On Linux Chromium loads the GSSAPI library only once its local state records a Negotiate challenge seen
        // (it then restarts its network service unsandboxed): a new profile would refuse the first challenge, so
        // the profile starts with that record, as a browser that met one before.
        var profile = Directory.CreateTempSubdirectory("sieveq-chromium-").FullName;
        await File.WriteAllTextAsync(Path.Combine(profile, "Local State"), """{ "net": { "received_http_auth_negotiate_headers": true } }""");
        await using var browser = await playwright.Chromium.LaunchPersistentContextAsync(profile, new BrowserTypeLaunchPersistentContextOptions
        {
            ExecutablePath = "/usr/bin/chromium",
            Headless = true,
            BaseURL = console.ConsoleUrl.ToString(),
            Env = env,
            Args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--auth-server-allowlist=localhost", "--disable-auth-negotiate-cname-lookup"],
        });
        try
        {
            var page = browser.Pages.Count > 0 ? browser.Pages[0] : await browser.NewPageAsync();

            UseTickets(cache, "alice");
            await page.GotoAsync("/account/login");
            await page.GetByTestId("windows-login").ClickAsync();
            await page.WaitForURLAsync(new Regex("/$"));
            await Assertions.Expect(page.GetByTestId("signed-in-as")).ToContainTextAsync("kerberos:alice@" + KerberosRealm.Realm);
            await page.GotoAsync("/senders");
            await Assertions.Expect(page.GetByTestId("interactive")).ToBeAttachedAsync(new() { Timeout = 20_000 });
            await page.GetByLabel("Reason (recorded in the audit log)").FillAsync("kerberos browser test");
            await page.GetByRole(AriaRole.Button, new() { Name = "Quarantine sender 1" }).ClickAsync();
            await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("quarantine of sender 1 recorded in the audit log", new() { Timeout = 40_000 });
            await page.GotoAsync("/audit");
            var row = page.GetByTestId("audit").Locator("tr", new() { HasText = "quarantine-sender" }).First;
            await Assertions.Expect(row).ToContainTextAsync(
                // Chromium reaches http://localhost over IPv6 or IPv4, whichever the console's dual listener answers first.
                new Regex($"console user 'kerberos:alice@{Regex.Escape(KerberosRealm.Realm)}' from (127\\.0\\.0\\.1|::1): kerberos browser test"), new() { Timeout = 20_000 });
            await page.ScreenshotAsync(new PageScreenshotOptions { Path = Path.Combine(LocalDeployment.Artefacts, "kerberos-audit.png"), FullPage = true });

            await browser.ClearCookiesAsync();
            UseTickets(cache, "victor");
            await page.GotoAsync("/account/login/windows");
            await page.WaitForURLAsync(new Regex("/$"));
            await Assertions.Expect(page.GetByTestId("signed-in-as")).ToContainTextAsync("kerberos:victor@" + KerberosRealm.Realm);
            await page.GotoAsync("/senders");
            await Assertions.Expect(page.GetByTestId("interactive")).ToBeAttachedAsync(new() { Timeout = 20_000 });
            await page.GetByLabel("Reason (recorded in the audit log)").FillAsync("viewer tries");
            await page.GetByRole(AriaRole.Button, new() { Name = "Quarantine sender 1" }).ClickAsync();
            await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("refused: quarantine needs the operator role");
            // A direct post with victor's session: refused for the role before anything reaches the controller.
            var post = await page.APIRequest.PostAsync("/api/senders/1/quarantine", new() { Form = page.APIRequest.CreateFormData().Set("reason", "direct"), MaxRedirects = 0 });
            Assert.Equal(403, post.Status);

            await browser.ClearCookiesAsync();
            UseTickets(cache, "nobody");
            var refused = await page.GotoAsync("/account/login/windows");
            Assert.Equal(403, refused!.Status);
            await Assertions.Expect(page.GetByTestId("windows-login-error")).ToContainTextAsync("gives that identity no role");
            var home = await page.APIRequest.GetAsync("/", new() { MaxRedirects = 0 });
            Assert.Equal(302, home.Status);
        }
        finally
        {
            await browser.CloseAsync();
            Directory.Delete(profile, recursive: true);
        }

        // Only alice's quarantine reached the controller.
        var audit = string.Concat(Directory.GetFiles(Path.Combine(console.Deployment, "data", "controller", "audit")).Select(File.ReadAllText));
        Assert.Contains($"kerberos:alice@{KerberosRealm.Realm}", audit, StringComparison.Ordinal);
        Assert.DoesNotContain("victor", audit, StringComparison.Ordinal);
    }

    /// <summary>.NET's own Negotiate client (GSSAPI on Linux) with the default credentials: the user's ticket cache.</summary>
    private HttpClient NegotiateClient(string user, CookieContainer? cookies = null)
    {
        // The one process-wide Kerberos environment of the test process; the class's tests run one at a time.
        NativeEnvironment.Set("KRB5_CONFIG", console.Realm.ConfigFile);
        NativeEnvironment.Set("KRB5CCNAME", console.Realm.CacheOf(user));
        var handler = new SocketsHttpHandler
        {
            Credentials = CredentialCache.DefaultCredentials,
            AllowAutoRedirect = false,
            UseCookies = cookies is not null,
            CookieContainer = cookies ?? new CookieContainer(),
            PooledConnectionLifetime = TimeSpan.Zero,
        };
        return new HttpClient(handler) { BaseAddress = console.ConsoleUrl, Timeout = TimeSpan.FromSeconds(90) };
    }

    [Fact]
    public async Task Dotnets_Negotiate_client_signs_in_with_the_ticket_cache_and_an_unmapped_principal_is_refused()
    {
        var cookies = new CookieContainer();
        using (var alice = NegotiateClient("alice", cookies))
        {
            using var signedIn = await alice.GetAsync("/account/login/windows?returnUrl=%2Faudit");
            Assert.Equal(HttpStatusCode.Redirect, signedIn.StatusCode);
            Assert.Equal("/audit", signedIn.Headers.Location?.OriginalString);
            // Mutual authentication: the console's answer token comes with the session.
            Assert.StartsWith("Negotiate ", signedIn.Headers.WwwAuthenticate.ToString(), StringComparison.Ordinal);
            Assert.NotNull(cookies.GetCookies(console.ConsoleUrl)["sieveq-console"]);
            using var page = await alice.GetAsync("/senders");
            Assert.Equal(HttpStatusCode.OK, page.StatusCode);
            Assert.Contains($"kerberos:alice@{KerberosRealm.Realm} (operator)", WebUtility.HtmlDecode(await page.Content.ReadAsStringAsync()), StringComparison.Ordinal);
            // Only a local path is a return address.
            using var elsewhere = await alice.GetAsync("/account/login/windows?returnUrl=%2F%2Fevil.example%2F");
            Assert.Equal("/", elsewhere.Headers.Location?.OriginalString);
        }
        using (var nobody = NegotiateClient("nobody"))
        {
            using var refused = await nobody.GetAsync("/account/login/windows");
            Assert.Equal(HttpStatusCode.Forbidden, refused.StatusCode);
            Assert.Contains("gives that identity no role", await refused.Content.ReadAsStringAsync(), StringComparison.Ordinal);
            Assert.False(SetsSession(refused));
        }
        // The keytab's path is neither shown nor logged.
        Assert.DoesNotContain(console.Realm.Keytab, console.Output(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_endpoint_challenges_without_a_token_and_refuses_malformed_and_forged_ones()
    {
        using var client = new HttpClient { BaseAddress = console.ConsoleUrl, Timeout = TimeSpan.FromSeconds(90) };
        using var challenge = await client.GetAsync("/account/login/windows");
        Assert.Equal(HttpStatusCode.Unauthorized, challenge.StatusCode);
        Assert.Equal("Negotiate", challenge.Headers.WwwAuthenticate.Single().Scheme);
        Assert.Contains("did not present a Kerberos ticket", await challenge.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        async Task<HttpStatusCode> SendAsync(string authorization)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, "/account/login/windows");
            request.Headers.TryAddWithoutValidation("Authorization", authorization);
            using var response = await client.SendAsync(request);
            Assert.False(SetsSession(response));
            return response.StatusCode;
        }
        Assert.Equal(HttpStatusCode.BadRequest, await SendAsync("Negotiate not*base64!"));
        Assert.Equal(HttpStatusCode.BadRequest, await SendAsync("Negotiate " + new string('A', 31 * 1024)));
        // Well-formed base64 that is no Kerberos token, and an NTLM negotiate message: refused, no session.
        Assert.Equal(HttpStatusCode.Unauthorized, await SendAsync("Negotiate " + Convert.ToBase64String(System.Text.Encoding.ASCII.GetBytes("not a ticket at all"))));
        Assert.Equal(HttpStatusCode.Unauthorized, await SendAsync("Negotiate TlRMTVNTUAABAAAAB4IIogAAAAAAAAAAAAAAAAAAAAAKAGFKAAAADw=="));
        // Another scheme is not an answer to the challenge.
        Assert.Equal(HttpStatusCode.Unauthorized, await SendAsync("Basic YWxpY2U6cGFzc3dvcmQ="));
    }

    private static bool SetsSession(HttpResponseMessage response) =>
        response.Headers.TryGetValues("Set-Cookie", out var cookies) && cookies.Any(c => c.StartsWith("sieveq-console=", StringComparison.Ordinal));

    private void UseTickets(string cache, string user) =>
        File.Copy(console.Realm.CacheOf(user)["FILE:".Length..], cache["FILE:".Length..], overwrite: true);
}
