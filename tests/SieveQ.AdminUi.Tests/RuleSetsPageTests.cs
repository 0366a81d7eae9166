using System.Text;
using Microsoft.AspNetCore.Components.Forms;
using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.AdminUi.Figures;
using SieveQ.AdminUi.RuleSetChanges;

namespace SieveQ.AdminUi.Tests;

public sealed class RuleSetsPageTests : ConsoleTestContext
{
    private async Task<IRenderedComponent<RuleSets>> RenderAsync(string user, ConsoleRole role)
    {
        await Services.GetRequiredService<LiveFigures>().PollOnceAsync(CancellationToken.None);
        return Render<RuleSets>(p => p.AddCascadingValue(SignedIn(user, role)));
    }

    private static void Upload(IRenderedComponent<RuleSets> page, string json, string name = "rules.json") =>
        page.FindComponents<InputFile>()[0].UploadFiles(InputFileContent.CreateFromText(json, name));

    private static async Task ClickAsync(IRenderedComponent<RuleSets> page, string label) =>
        await page.Find($"button[aria-label='{label}']").ClickAsync(new());

    [Fact]
    public async Task The_rule_sets_page_shows_each_replicas_version_and_the_agreed_one()
    {
        var page = await RenderAsync("admin", ConsoleRole.Administrator);
        Assert.Equal("Running version 3 (agreed by 2 replicas, f+1 = 2 needed)", page.Find("[data-testid=agreed-version]").TextContent.Trim());
        var rows = page.FindAll("[data-testid=replica-rule-sets] tbody tr");
        Assert.Equal(2, rows.Count);
        Assert.Equal("replica-sq-0 3 2 - 2 -", string.Join(' ', rows[0].QuerySelectorAll("td").Select(td => td.TextContent.Trim())));
        Assert.NotNull(page.Find("[data-testid=fixed-routes]"));
    }

    [Fact]
    public async Task An_operator_uploads_sees_the_check_the_diff_and_the_dry_run_then_pushes_and_rolls_back()
    {
        var page = await RenderAsync("olga", ConsoleRole.Operator);
        Upload(page, TestRuleSets.Json(4, "new-rules"));
        page.WaitForAssertion(() => Assert.Contains("rules.json", page.Find("[data-testid=upload-status]").TextContent, StringComparison.Ordinal));
        page.Find("#samples").Input("1 2 reading 42\n1 2 base64:" + Convert.ToBase64String(Encoding.UTF8.GetBytes("malware")) + "\n7 2 hello");
        await ClickAsync(page, "Check and dry run");

        page.WaitForAssertion(() => Assert.Equal("the rule set passes every check", page.Find("[data-testid=check-result]").TextContent.Trim()));
        Assert.Contains("new-rules version 4", page.Find("[data-testid=upload-summary]").TextContent, StringComparison.Ordinal);
        Assert.Contains("running: version 3", page.Find("[data-testid=upload-summary]").TextContent, StringComparison.Ordinal);
        var diff = page.FindAll("[data-testid=rule-set-diff] div").Select(d => d.TextContent).ToList();
        Assert.Contains("-   \"name\": \"test-rules\",", diff);
        Assert.Contains("+   \"name\": \"new-rules\",", diff);
        Assert.Contains("-   \"version\": 3", diff);
        Assert.Contains("+   \"version\": 4", diff);
        var verdicts = page.FindAll("[data-testid=dry-run] tbody tr").Select(r => string.Join(' ', r.QuerySelectorAll("td").Take(5).Select(td => td.TextContent.Trim()))).ToList();
        Assert.Equal(["1 1 2 allow one-to-two", "2 1 2 deny no-malware", "3 7 2 deny default-deny"], verdicts);
        Assert.Empty(Controller.Ordering.Pushes);

        page.Find("#rule-set-reason").Input("new routes");
        await ClickAsync(page, "Push the rule set");
        page.WaitForAssertion(() => Assert.Contains("APPLIED: activated version 4", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        Assert.Equal(4, Assert.Single(Controller.Ordering.Pushes).Against.ActiveVersion + 1);
        var pushed = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("push-rule-set", pushed.Action);
        Assert.Contains("console user 'olga' from 192.0.2.7: new routes", pushed.Target, StringComparison.Ordinal);

        await ClickAsync(page, "Roll back the rule set");
        page.WaitForAssertion(() => Assert.Contains("APPLIED: rolled back to version 3", page.Find("[data-testid=action-result]").TextContent, StringComparison.Ordinal));
        Assert.Equal("rollback-rule-set", Controller.Host.Audit.Tail(1).Single().Action);
    }

    [Fact]
    public async Task A_broken_rule_set_shows_the_check_that_failed_and_cannot_be_pushed()
    {
        var page = await RenderAsync("olga", ConsoleRole.Operator);
        Upload(page, TestRuleSets.Json(4).Replace("\"receivers\": [2]", "\"receivers\": [9]", StringComparison.Ordinal));
        page.WaitForAssertion(() => Assert.NotNull(page.Find("[data-testid=upload-status]")));
        await ClickAsync(page, "Check and dry run");
        page.WaitForAssertion(() => Assert.StartsWith("refused: ", page.Find("[data-testid=check-result]").TextContent.Trim(), StringComparison.Ordinal));
        Assert.Contains("9", page.Find("[data-testid=check-result]").TextContent, StringComparison.Ordinal);
        Assert.True(page.Find("button[aria-label='Push the rule set']").HasAttribute("disabled"));
    }

    [Fact]
    public async Task An_upload_over_the_cap_is_refused_before_it_is_read()
    {
        var page = await RenderAsync("olga", ConsoleRole.Operator);
        Upload(page, new string(' ', RuleSetActions.MaxDocumentBytes + 1), "huge.json");
        page.WaitForAssertion(() => Assert.Contains($"may have at most {RuleSetActions.MaxDocumentBytes}", page.Find("[data-testid=upload-status]").TextContent, StringComparison.Ordinal));
        Assert.True(page.Find("button[aria-label='Check and dry run']").HasAttribute("disabled"));
    }

    [Fact]
    public async Task A_viewer_is_refused_review_push_and_rollback_on_the_server_and_nothing_reaches_the_controller()
    {
        var before = Controller.Host.Audit.LastSequence;
        var page = await RenderAsync("vera", ConsoleRole.Viewer);
        Upload(page, TestRuleSets.Json(4));
        page.WaitForAssertion(() => Assert.NotNull(page.Find("[data-testid=upload-status]")));
        await ClickAsync(page, "Check and dry run");
        page.WaitForAssertion(() => Assert.Equal("refused: a rule-set review needs the operator role", page.Find("[data-testid=action-result]").TextContent.Trim()));
        await ClickAsync(page, "Roll back the rule set");
        page.WaitForAssertion(() => Assert.Equal("refused: a rule-set rollback needs the operator role", page.Find("[data-testid=action-result]").TextContent.Trim()));
        // The push button stays disabled without a passed check; a forged circuit event reaches the same server check.
        var actions = Services.GetRequiredService<RuleSetActions>();
        var push = await actions.PushAsync(await SignedIn("vera", ConsoleRole.Viewer).ContinueWith(t => t.Result.User, TaskScheduler.Default), Encoding.UTF8.GetBytes(TestRuleSets.Json(4)), [], "", CancellationToken.None);
        Assert.True(push.Refused);
        Assert.Empty(Controller.Ordering.Pushes);
        Assert.Empty(Controller.Ordering.Rollbacks);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Fact]
    public void Samples_are_parsed_as_text_or_base64_and_malformed_lines_are_named()
    {
        var (samples, error) = SampleMessages.Parse("# comment\n1 2 hello world\n\n3 4 base64:AAEC\n5 6");
        Assert.Null(error);
        Assert.Equal([(1u, 2u, "68656c6c6f20776f726c64"), (3u, 4u, "000102"), (5u, 6u, "")],
            samples.Select(s => (s.Sender, s.Receiver, Convert.ToHexStringLower(s.Payload.Span))));
        Assert.Equal("line 2: expected SENDER RECEIVER PAYLOAD (two ids, then the payload as text or base64:...)", SampleMessages.Parse("1 2 ok\nx 2 no").Error);
        Assert.Equal("line 1: the payload after base64: is not base64", SampleMessages.Parse("1 2 base64:%%").Error);
        Assert.Equal($"more than {SampleMessages.MaxSamples} samples", SampleMessages.Parse(string.Concat(Enumerable.Repeat("1 2 x\n", SampleMessages.MaxSamples + 1))).Error);
    }

    [Fact]
    public void The_diff_shows_changed_members_with_context_and_skips_the_rest()
    {
        var running = "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7}";
        var uploaded = "{\"a\":1,\"b\":2,\"c\":3,\"d\":40,\"e\":5,\"f\":6,\"g\":7}";
        var lines = CanonicalDiff.Lines(running, uploaded).Select(l => $"{l.Kind}{l.Text.Trim()}").ToList();
        Assert.Equal(["~(2 unchanged lines)", " \"b\": 2,", " \"c\": 3,", "-\"d\": 4,", "+\"d\": 40,", " \"e\": 5,", " \"f\": 6,", "~(2 unchanged lines)"], lines);
        Assert.Empty(CanonicalDiff.Lines(running, running));
    }
}
