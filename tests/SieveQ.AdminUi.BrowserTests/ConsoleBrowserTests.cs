using System.Globalization;
using System.Net;
using System.Text.RegularExpressions;
using Deque.AxeCore.Playwright;
using Microsoft.Playwright;

namespace SieveQ.AdminUi.BrowserTests;

/// <summary>
/// The console as an operator meets it, in Chromium, against one `sieveq up` deployment shared by the class:
/// sign-in and lockout, live figures under the demo traffic, a quarantine and its audit record, a rule set checked,
/// pushed and rolled back, a viewer refused
/// every change through the page and by posting directly, and axe-core on every page.
/// </summary>
public sealed partial class ConsoleBrowserTests(LocalDeployment deployment) : IClassFixture<LocalDeployment>
{
    private static readonly string[] Pages = ["/", "/senders", "/receivers", "/pre-sqs", "/replicas", "/drivers", "/alarms", "/rule-sets", "/audit", "/account/password", "/accounts"];

    private async Task<IPage> SignInAsync(string user)
    {
        var context = await deployment.Browser.NewContextAsync(new BrowserNewContextOptions { BaseURL = deployment.ConsoleUrl.ToString() });
        var page = await context.NewPageAsync();
        await page.GotoAsync("/account/login");
        await page.GetByLabel("User name").FillAsync(user);
        await page.GetByLabel("Password").FillAsync(deployment.Passwords[user]);
        await page.GetByRole(AriaRole.Button, new() { Name = "Sign in" }).ClickAsync();
        await page.WaitForURLAsync(new Regex("/$"));
        await Assertions.Expect(page.GetByTestId("signed-in-as")).ToContainTextAsync(user);
        return page;
    }

    /// <summary>A click before the circuit is connected would land on the prerendered page and do nothing.</summary>
    private static Task InteractiveAsync(IPage page) =>
        Assertions.Expect(page.GetByTestId("interactive")).ToBeAttachedAsync(new() { Timeout = 20_000 });

    [GeneratedRegex(@"\d+: 1, 2\b|\d+: 1\b.*\d+: 2\b|\d+: 2\b.*\d+: 1\b", RegexOptions.Singleline)]
    private static partial Regex AssignedBothDemoSenders();

    private static async Task ScreenshotAsync(IPage page, string name) =>
        await page.ScreenshotAsync(new PageScreenshotOptions { Path = Path.Combine(LocalDeployment.Artefacts, name + ".png"), FullPage = true });

    [Fact]
    public async Task A_wrong_password_is_refused_and_repeated_failures_lock_the_account()
    {
        var context = await deployment.Browser.NewContextAsync(new BrowserNewContextOptions { BaseURL = deployment.ConsoleUrl.ToString() });
        var page = await context.NewPageAsync();
        async Task TryAsync(string password)
        {
            await page.GotoAsync("/account/login");
            await page.GetByLabel("User name").FillAsync("locktest");
            await page.GetByLabel("Password").FillAsync(password);
            await page.GetByRole(AriaRole.Button, new() { Name = "Sign in" }).ClickAsync();
            await page.WaitForLoadStateAsync();
        }
        await TryAsync("wrong-password");
        await Assertions.Expect(page.GetByTestId("login-error")).ToBeVisibleAsync();
        await ScreenshotAsync(page, "login-refused");
        for (var i = 1; i < 5; i++)
        {
            await TryAsync("wrong-password");
        }
        // Five failures (console.json's maxFailedLogins): now even the right password is refused.
        await TryAsync(deployment.Passwords["locktest"]);
        await Assertions.Expect(page.GetByTestId("login-error")).ToBeVisibleAsync();
        Assert.Contains("/account/login", page.Url, StringComparison.Ordinal);
        var home = await context.APIRequest.GetAsync("/", new() { MaxRedirects = 0 });
        Assert.Equal(302, home.Status);
        await context.CloseAsync();
    }

    [Fact]
    public async Task The_overview_shows_live_figures_that_change_under_traffic()
    {
        var page = await SignInAsync("admin");
        var total = page.GetByTestId("delivered-total");
        await Assertions.Expect(total).ToBeVisibleAsync(new() { Timeout = 20_000 });
        var first = await total.TextContentAsync();
        // Pushed by the server (the circuit's subscription to the poller): no reload between the two readings.
        await Assertions.Expect(total).Not.ToHaveTextAsync(first!, new() { Timeout = 20_000 });
        await Assertions.Expect(page.GetByTestId("delivered-rate")).Not.ToHaveTextAsync("0 msg/s", new() { Timeout = 20_000 });
        await Assertions.Expect(page.GetByTestId("components")).ToContainTextAsync("replica-sq");
        await Assertions.Expect(page.GetByTestId("drops")).ToContainTextAsync("(f) rules");
        // The agent's verdict latency under the demo traffic, as `sieveq status` reads it.
        await Assertions.Expect(page.GetByTestId("verdict-latency")).ToContainTextAsync("p99", new() { Timeout = 20_000 });
        await page.WaitForTimeoutAsync(6_000); // a few more points on the chart for the screenshot
        await ScreenshotAsync(page, "console-overview");
        await page.Context.CloseAsync();
    }

    [Fact]
    public async Task An_operator_quarantines_a_sender_and_reads_the_audit_record()
    {
        var page = await SignInAsync("operator1");
        await page.GotoAsync("/senders");
        await InteractiveAsync(page);
        await page.GetByLabel("Reason (recorded in the audit log)").FillAsync("browser test quarantine");
        await page.GetByRole(AriaRole.Button, new() { Name = "Quarantine sender 1" }).ClickAsync();
        // `up --rules` gives the controller the administrator command key: the replicas apply the quarantine.
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("quarantine of sender 1 recorded in the audit log", new() { Timeout = 40_000 });
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("; applied");
        await ScreenshotAsync(page, "senders-quarantined");
        // Readmitted, so the class's other tests see sender 1's demo traffic again.
        await page.GetByRole(AriaRole.Button, new() { Name = "Readmit sender 1" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("readmit of sender 1 recorded in the audit log", new() { Timeout = 40_000 });
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("; applied");
        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        var row = page.GetByTestId("audit").Locator("tr", new() { HasText = "quarantine-sender" }).First;
        await Assertions.Expect(row).ToContainTextAsync("console user 'operator1' from 127.0.0.1: browser test quarantine");
        await Assertions.Expect(row).ToContainTextAsync("sender 1");
        // From where, twice: the browser the user asked from, and the console's own call to the controller.
        await Assertions.Expect(row).ToContainTextAsync(new Regex(@"\(console, \w+\) from 127\.0\.0\.1"));
        await ScreenshotAsync(page, "audit");
        await page.Context.CloseAsync();
    }

    [Fact]
    public async Task An_operator_enrols_a_new_sender_through_the_ordering_revokes_it_and_reads_both_audit_records()
    {
        var request = await deployment.EnrolmentRequestAsync("browser-sender");
        var page = await SignInAsync("operator1");
        await page.GotoAsync("/senders");
        await InteractiveAsync(page);
        await page.Locator("#enrol-request").FillAsync(request);
        await page.Locator("#enrol-reason").FillAsync("browser test enrolment");
        await page.GetByRole(AriaRole.Button, new() { Name = "Enrol sender" }).ClickAsync();
        // The replicas pick the next free id and apply it (the controller holds the administrator key: `up --rules`).
        var result = page.GetByTestId("enrolment-result");
        await Assertions.Expect(result).ToContainTextAsync("applied: enrol sender", new() { Timeout = 40_000 });
        var id = Regex.Match(await result.TextContentAsync() ?? "", @"enrol sender (\d+) \('browser-sender'\): applied").Groups[1].Value;
        Assert.False(string.IsNullOrEmpty(id), await result.TextContentAsync());
        await ScreenshotAsync(page, "sender-enrolled");
        await page.Locator("#revoke-id").FillAsync(id);
        await page.Locator("#revoke-reason").FillAsync("browser test revocation");
        await page.GetByRole(AriaRole.Button, new() { Name = "Revoke sender" }).ClickAsync();
        await Assertions.Expect(result).ToContainTextAsync($"applied: revoke sender {id}: applied", new() { Timeout = 40_000 });
        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        var audit = page.GetByTestId("audit");
        await Assertions.Expect(audit.Locator("tr", new() { HasText = "enrol-sender" }).First).ToContainTextAsync("'browser-sender', signing key");
        await Assertions.Expect(audit.Locator("tr", new() { HasText = "revoke-sender" }).First).ToContainTextAsync($"sender {id} (reason: console user 'operator1' from 127.0.0.1: browser test revocation)");
        await page.Context.CloseAsync();
    }

    [Fact]
    public async Task A_viewer_is_refused_every_change_through_the_page_and_by_posting_directly()
    {
        var page = await SignInAsync("viewer1");
        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        // The first row's text waits for the table to be filled; the count would not.
        var head = await page.GetByTestId("audit").Locator("tbody tr").First.TextContentAsync();
        var before = await page.GetByTestId("audit").Locator("tbody tr").CountAsync();

        await page.GotoAsync("/senders");
        await InteractiveAsync(page);
        await page.GetByRole(AriaRole.Button, new() { Name = "Quarantine sender 2" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("refused");
        await page.GetByRole(AriaRole.Button, new() { Name = "Readmit sender 2" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("refused");
        await ScreenshotAsync(page, "viewer-refused");

        // Directly, with the viewer's own cookie: without the antiforgery token, then with a valid one.
        var api = page.Context.APIRequest;
        foreach (var action in new[] { "senders/2/quarantine", "senders/2/readmit", "senders/enrol", "senders/2/revoke", "pre-sqs/0/quarantine", "pre-sqs/0/readmit", "pre-sqs/4/start", "pre-sqs/4/stop", "pre-sqs/4/replace", "rule-sets/push", "rule-sets/rollback" })
        {
            // The role is checked before the token: refused for the role either way.
            var noToken = await api.PostAsync($"/api/{action}", Post(api, action, ("reason", "direct")));
            Assert.Equal((int)HttpStatusCode.Forbidden, noToken.Status);
            var token = await page.Locator("form[action='/account/logout'] input[name='__RequestVerificationToken']").GetAttributeAsync("value");
            Assert.False(string.IsNullOrEmpty(token));
            var withToken = await api.PostAsync($"/api/{action}", Post(api, action, ("reason", "direct"), ("__RequestVerificationToken", token!)));
            Assert.Equal((int)HttpStatusCode.Forbidden, withToken.Status);
        }
        // Nobody signed in: 401.
        var anonymous = await deployment.Browser.NewContextAsync(new BrowserNewContextOptions { BaseURL = deployment.ConsoleUrl.ToString() });
        var unauthenticated = await anonymous.APIRequest.PostAsync("/api/senders/2/quarantine", new() { Form = FormWith(anonymous.APIRequest, ("reason", "x")), MaxRedirects = 0 });
        Assert.Equal((int)HttpStatusCode.Unauthorized, unauthenticated.Status);
        await anonymous.CloseAsync();

        // Nothing reached the controller: the audit log's newest record is the one seen before.
        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        await Assertions.Expect(page.GetByTestId("audit").Locator("tbody tr").First).ToHaveTextAsync(head!);
        Assert.DoesNotContain("viewer1", await page.GetByTestId("audit").TextContentAsync() ?? "", StringComparison.Ordinal);
        Assert.True(before > 0);
        await page.Context.CloseAsync();
    }

    [Fact]
    public async Task An_operator_checks_pushes_and_rolls_back_a_rule_set_and_the_running_version_and_the_drops_follow()
    {
        var page = await SignInAsync("operator1");
        await page.GotoAsync("/rule-sets");
        await InteractiveAsync(page);
        var agreed = page.GetByTestId("agreed-version");
        await Assertions.Expect(agreed).ToContainTextAsync("Running version 1 ", new() { Timeout = 20_000 });
        await page.Locator("#rule-set-file").SetInputFilesAsync(new FilePayload
        {
            Name = "demo-v2.json",
            MimeType = "application/json",
            Buffer = System.Text.Encoding.UTF8.GetBytes(LocalDeployment.RuleSet(2, stopSender2: true)),
        });
        await Assertions.Expect(page.GetByTestId("upload-status")).ToContainTextAsync("demo-v2.json");
        await page.Locator("#samples").FillAsync("1 100 reading 42\n2 100 reading 43");
        await page.GetByRole(AriaRole.Button, new() { Name = "Check and dry run" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("check-result")).ToContainTextAsync("the rule set passes every check", new() { Timeout = 20_000 });
        // The diff against version 1, which the controller has from `up`.
        await Assertions.Expect(page.GetByTestId("rule-set-diff")).ToContainTextAsync("stop-sender-2");
        var rows = page.GetByTestId("dry-run").Locator("tbody tr");
        await Assertions.Expect(rows.Nth(0)).ToContainTextAsync("demo-routes");
        await Assertions.Expect(rows.Nth(1)).ToContainTextAsync("stop-sender-2");
        await ScreenshotAsync(page, "rule-set-review");

        await page.Locator("#rule-set-reason").FillAsync("browser test push");
        await page.GetByRole(AriaRole.Button, new() { Name = "Push the rule set" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("APPLIED: activated version 2", new() { Timeout = 40_000 });
        await Assertions.Expect(agreed).ToContainTextAsync("Running version 2 ", new() { Timeout = 20_000 });
        await ScreenshotAsync(page, "rule-set-pushed");
        // The live figures follow: sender 2's demo messages are now dropped at stage (f), the rules.
        await page.GotoAsync("/");
        await InteractiveAsync(page);
        var ruleDrops = page.GetByTestId("drops").Locator("tr", new() { HasText = "(f) rules" }).Locator("td").Nth(1);
        await Assertions.Expect(ruleDrops).ToBeVisibleAsync(new() { Timeout = 20_000 });
        var dropsThen = await ruleDrops.TextContentAsync();
        await Assertions.Expect(ruleDrops).Not.ToHaveTextAsync(dropsThen!, new() { Timeout = 20_000 });

        await page.GotoAsync("/rule-sets");
        await InteractiveAsync(page);
        await page.GetByRole(AriaRole.Button, new() { Name = "Roll back the rule set" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("APPLIED: rolled back to version 1", new() { Timeout = 40_000 });
        await Assertions.Expect(agreed).ToContainTextAsync("Running version 1 ", new() { Timeout = 20_000 });
        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        await Assertions.Expect(page.GetByTestId("audit").Locator("tr", new() { HasText = "push-rule-set" }).First).ToContainTextAsync("console user 'operator1' from 127.0.0.1: browser test push");
        await Assertions.Expect(page.GetByTestId("audit").Locator("tr", new() { HasText = "rollback-rule-set" }).First).ToContainTextAsync("applied: rolled back to version 1");
        await page.Context.CloseAsync();
    }

    [Fact]
    public async Task An_operator_quarantines_a_pre_sq_acknowledges_its_alarm_readmits_it_and_reads_the_audit_records()
    {
        var page = await SignInAsync("operator1");
        await page.GotoAsync("/pre-sqs");
        await InteractiveAsync(page);
        await Assertions.Expect(page.GetByTestId("pre-sqs")).ToContainTextAsync("healthy", new() { Timeout = 20_000 });
        // The demo's senders 1 and 2, each carried by the pre-SQ f+1 replicas' health reports (assigned.sender.{id}).
        await Assertions.Expect(page.GetByTestId("pre-sqs")).ToContainTextAsync(AssignedBothDemoSenders(), new() { Timeout = 30_000 });
        var quarantine = page.GetByRole(AriaRole.Button, new() { NameRegex = new Regex("^Quarantine pre-SQ ") }).First;
        var id = (await quarantine.GetAttributeAsync("aria-label"))!["Quarantine pre-SQ ".Length..];
        await page.GetByLabel("Reason (recorded in the audit log)").FillAsync("browser test pre-SQ");
        await quarantine.ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync($"quarantine of pre-SQ {id} recorded in the audit log");
        // The quarantine is an alarm once f+1 replicas report it; the operator acknowledges it there.
        await page.GotoAsync("/alarms");
        await InteractiveAsync(page);
        var alarm = page.GetByTestId($"alarm-quarantine/pre-sq/{id}");
        await Assertions.Expect(alarm).ToContainTextAsync($"pre-SQ {id} quarantined", new() { Timeout = 30_000 });
        await page.GetByLabel("What is being done (recorded in the audit log)").FillAsync("browser test: readmitting");
        await page.GetByRole(AriaRole.Button, new() { Name = $"Acknowledge quarantine/pre-sq/{id}" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("alarm acknowledged; recorded in the audit log");
        await Assertions.Expect(page.GetByTestId($"ack-quarantine/pre-sq/{id}")).ToContainTextAsync("acknowledged by operator1 at ");
        await page.GotoAsync("/pre-sqs");
        await InteractiveAsync(page);
        await page.GetByRole(AriaRole.Button, new() { Name = $"Readmit pre-SQ {id}" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync($"readmit of pre-SQ {id} recorded in the audit log");
        await ScreenshotAsync(page, "pre-sqs");
        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        var audit = page.GetByTestId("audit");
        await Assertions.Expect(audit.Locator("tr", new() { HasText = "quarantine-pre-sq" }).First).ToContainTextAsync($"pre-SQ {id} (reason: console user 'operator1' from 127.0.0.1: browser test pre-SQ)");
        await Assertions.Expect(audit.Locator("tr", new() { HasText = "readmit-pre-sq" }).First).ToContainTextAsync($"pre-SQ {id}");
        await Assertions.Expect(audit.Locator("tr", new() { HasText = "console-acknowledge-alarm" }).First).ToContainTextAsync("console user 'operator1' from 127.0.0.1: browser test: readmitting");
        await page.Context.CloseAsync();
    }

    /// <summary>
    /// The processes themselves, on `up`'s deployment, whose controller owns them: an administrator recovers a replica-SQ
    /// (restarted on its kept state, back once it has caught up) and replaces a pre-SQ, each after a confirmation, and
    /// reads both in the audit log. The demo traffic flows throughout; the deployment is healthy again after.
    /// </summary>
    [Fact]
    public async Task An_administrator_recovers_a_replica_and_replaces_a_pre_sq_of_the_running_deployment()
    {
        var page = await SignInAsync("admin");
        await page.GotoAsync("/replicas");
        await InteractiveAsync(page);
        await Assertions.Expect(page.GetByTestId("replica-replica-sq-3")).ToContainTextAsync("healthy", new() { Timeout = 30_000 });
        await page.GetByLabel("Reason (recorded in the audit log)").FillAsync("browser test recovery");
        await page.GetByRole(AriaRole.Button, new() { Name = "Recover replica-SQ 3" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("confirm-action")).ToContainTextAsync("Recover replica-SQ 3?");
        await page.GetByRole(AriaRole.Button, new() { Name = "Confirm recovery of replica-SQ 3" }).ClickAsync();
        // The answer comes once the fresh process has caught up: seconds on an idle machine, more on a loaded one.
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync("recover of replica-SQ 3 recorded in the audit log", new() { Timeout = 240_000 });
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync(new Regex("recovered: started pid \\d+, healthy; caught up: decided up to \\d+"));

        await page.GotoAsync("/pre-sqs");
        await InteractiveAsync(page);
        await Assertions.Expect(page.GetByTestId("pre-sqs")).ToContainTextAsync("healthy", new() { Timeout = 30_000 });
        var replace = page.GetByRole(AriaRole.Button, new() { NameRegex = new Regex("^Replace pre-SQ ") }).First;
        var id = (await replace.GetAttributeAsync("aria-label"))!["Replace pre-SQ ".Length..];
        await page.GetByLabel("Reason (recorded in the audit log)").FillAsync("browser test replacement");
        await replace.ClickAsync();
        await page.GetByRole(AriaRole.Button, new() { Name = $"Confirm replace of pre-SQ {id}" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync($"replace of pre-SQ {id} recorded in the audit log", new() { Timeout = 240_000 });
        await Assertions.Expect(page.GetByTestId("action-result")).ToContainTextAsync(new Regex("replaced: started pid \\d+, healthy"));

        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        var audit = page.GetByTestId("audit");
        await Assertions.Expect(audit.Locator("tr", new() { HasText = "recover-replica" }).First).ToContainTextAsync("replica-SQ 3 (reason: console user 'admin' from 127.0.0.1: browser test recovery)");
        await Assertions.Expect(audit.Locator("tr", new() { HasText = "replace-pre-sq" }).First).ToContainTextAsync($"pre-SQ {id} (reason: console user 'admin' from 127.0.0.1: browser test replacement)");
        await page.Context.CloseAsync();
    }

    [Fact]
    public async Task A_user_changes_their_password_and_only_the_new_one_signs_in_and_their_other_open_page_is_signed_out()
    {
        var page = await SignInAsync("pwtest");
        // The same user in another browser, a page open: the change below ends that session, page and all.
        var elsewhere = await SignInAsync("pwtest");
        await elsewhere.GotoAsync("/senders");
        await InteractiveAsync(elsewhere);
        // The form endpoint for scripts: without the antiforgery token refused (400), with it but a wrong current password refused (403).
        var api = page.Context.APIRequest;
        var token = await page.Locator("form[action='/account/logout'] input[name='__RequestVerificationToken']").GetAttributeAsync("value");
        var fields = new[] { ("current", "not the password"), ("password", "forged new passphrase"), ("confirmation", "forged new passphrase") };
        Assert.Equal((int)HttpStatusCode.BadRequest, (await api.PostAsync("/api/account/password", new() { Form = FormWith(api, fields), MaxRedirects = 0 })).Status);
        Assert.Equal((int)HttpStatusCode.Forbidden, (await api.PostAsync("/api/account/password",
            new() { Form = FormWith(api, [.. fields, ("__RequestVerificationToken", token!)]), MaxRedirects = 0 })).Status);
        await page.GotoAsync("/account/password");
        await InteractiveAsync(page);
        await page.GetByLabel("Current password").FillAsync(deployment.Passwords["pwtest"]);
        await page.GetByLabel("New password", new() { Exact = true }).FillAsync("a browser-tested passphrase");
        await page.GetByLabel("New password again").FillAsync("a browser-tested passphrase");
        await page.GetByRole(AriaRole.Button, new() { Name = "Change password" }).ClickAsync();
        await Assertions.Expect(page.GetByTestId("password-result")).ToContainTextAsync("password changed; recorded in the audit log");
        await ScreenshotAsync(page, "password-changed");
        // The open page elsewhere is sent to the sign-in page by the periodic check (every 10 s, CircuitSessionCheck),
        // with no click or reload there.
        await elsewhere.WaitForURLAsync(new Regex("/account/login"), new() { Timeout = 40_000 });
        await elsewhere.GotoAsync("/senders");
        await Assertions.Expect(elsewhere).ToHaveURLAsync(new Regex("/account/login"));
        await elsewhere.Context.CloseAsync();
        // The session the change was made from stands on.
        await page.GotoAsync("/senders");
        await Assertions.Expect(page.GetByTestId("signed-in-as")).ToContainTextAsync("pwtest");
        await page.Context.CloseAsync();

        var context = await deployment.Browser.NewContextAsync(new BrowserNewContextOptions { BaseURL = deployment.ConsoleUrl.ToString() });
        var login = await context.NewPageAsync();
        foreach (var (password, accepted) in new[] { (deployment.Passwords["pwtest"], false), ("a browser-tested passphrase", true) })
        {
            await login.GotoAsync("/account/login");
            await login.GetByLabel("User name").FillAsync("pwtest");
            await login.GetByLabel("Password").FillAsync(password);
            await login.GetByRole(AriaRole.Button, new() { Name = "Sign in" }).ClickAsync();
            await login.WaitForLoadStateAsync();
            if (accepted)
            {
                await Assertions.Expect(login.GetByTestId("signed-in-as")).ToContainTextAsync("pwtest");
            }
            else
            {
                await Assertions.Expect(login.GetByTestId("login-error")).ToBeVisibleAsync();
            }
        }
        await login.GotoAsync("/audit");
        await InteractiveAsync(login);
        await Assertions.Expect(login.GetByTestId("audit").Locator("tr", new() { HasText = "console-change-password" }).First).ToContainTextAsync("console user 'pwtest' from 127.0.0.1 changed their own password");
        await context.CloseAsync();
    }

    [Fact]
    public async Task An_operator_posting_directly_with_the_token_is_audited()
    {
        var page = await SignInAsync("operator1");
        var token = await page.Locator("form[action='/account/logout'] input[name='__RequestVerificationToken']").GetAttributeAsync("value");
        var api = page.Context.APIRequest;
        // The operator's own cookie without the antiforgery token (what a cross-site form would send): refused.
        var forged = await api.PostAsync("/api/senders/2/readmit", new() { Form = FormWith(api, ("reason", "forged post")), MaxRedirects = 0 });
        Assert.Equal((int)HttpStatusCode.BadRequest, forged.Status);
        var reply = await api.PostAsync("/api/senders/2/readmit",
            new() { Form = FormWith(api, ("reason", "direct post"), ("__RequestVerificationToken", token!)), MaxRedirects = 0 });
        Assert.Equal(200, reply.Status);
        await page.GotoAsync("/audit");
        await InteractiveAsync(page);
        await Assertions.Expect(page.GetByTestId("audit").Locator("tr", new() { HasText = "console user 'operator1' from 127.0.0.1: direct post" }).First).ToContainTextAsync("readmit-sender");
        Assert.DoesNotContain("forged post", await page.GetByTestId("audit").TextContentAsync() ?? "", StringComparison.Ordinal);
        await page.Context.CloseAsync();
    }

    [Fact]
    public async Task Every_page_has_no_serious_accessibility_violation_and_sends_the_security_headers()
    {
        var page = await SignInAsync("admin");
        foreach (var path in Pages)
        {
            var response = await page.GotoAsync(path);
            Assert.NotNull(response);
            var headers = await response!.AllHeadersAsync();
            Assert.Contains("frame-ancestors 'none'", headers["content-security-policy"], StringComparison.Ordinal);
            Assert.Contains("script-src 'self'", headers["content-security-policy"], StringComparison.Ordinal);
            Assert.Equal("DENY", headers["x-frame-options"]);
            Assert.Equal("nosniff", headers["x-content-type-options"]);
            Assert.Equal("no-referrer", headers["referrer-policy"]);
            await page.WaitForTimeoutAsync(500);
            var result = await page.RunAxe();
            var serious = result.Violations.Where(v => v.Impact is "serious" or "critical").Select(v => $"{path}: {v.Id} ({v.Impact}) {v.Help}: {string.Join(" | ", v.Nodes.Select(n => n.Html))}").ToList();
            Assert.True(serious.Count == 0, string.Join("\n", serious));
            await ScreenshotAsync(page, "page" + path.Replace('/', '-'));
        }
        await page.Context.CloseAsync();
        var login = await (await deployment.Browser.NewContextAsync(new BrowserNewContextOptions { BaseURL = deployment.ConsoleUrl.ToString() })).NewPageAsync();
        await login.GotoAsync("/account/login");
        var loginResult = await login.RunAxe();
        Assert.DoesNotContain(loginResult.Violations, v => v.Impact is "serious" or "critical");
        await login.Context.CloseAsync();
    }

    /// <summary>A form post as a browser would send it: a rule-set push is multipart, with the file.</summary>
    private static APIRequestContextOptions Post(IAPIRequestContext api, string action, params (string Name, string Value)[] fields)
    {
        if (action != "rule-sets/push")
        {
            return new() { Form = FormWith(api, fields), MaxRedirects = 0 };
        }
        var form = FormWith(api, fields);
        form.Set("document", new FilePayload { Name = "v9.json", MimeType = "application/json", Buffer = System.Text.Encoding.UTF8.GetBytes(LocalDeployment.RuleSet(9, stopSender2: true)) });
        return new() { Multipart = form, MaxRedirects = 0 };
    }

    private static IFormData FormWith(IAPIRequestContext api, params (string Name, string Value)[] fields)
    {
        var form = api.CreateFormData();
        foreach (var (name, value) in fields)
        {
            form.Set(name, value);
        }
        return form;
    }
}
