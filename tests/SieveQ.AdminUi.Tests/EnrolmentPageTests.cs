using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Components.Pages;
using SieveQ.Controller.Access;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>Enrolment and revocation on the senders and receivers pages, against the real controller (which audits them; it holds no command key here).</summary>
public sealed class EnrolmentPageTests : ConsoleTestContext
{
    /// <summary>What `sieveq enrol request --name NAME` writes on the sender's host.</summary>
    private PartyEnrolmentRequest MakeRequest(string name) => PartyEnrolmentRequest.Create(Path.Combine(Controller.Directory, "sender-host-" + name), name);

    private string Result(Bunit.IRenderedComponent<Senders> page) => page.Find("[data-testid=enrolment-result]").TextContent;

    [Fact]
    public async Task An_operator_enrols_a_sender_from_its_request_and_the_controller_records_it_with_the_user_named()
    {
        var request = MakeRequest("branch-7");
        var page = Render<Senders>(p => p.AddCascadingValue(SignedIn("olga", ConsoleRole.Operator)));
        page.Find("#enrol-request").Input(request.ToJson());
        page.Find("#enrol-id").Input("40");
        page.Find("#enrol-reason").Input("new office");
        await page.Find("button[aria-label='Enrol sender']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("enrolment of sender 'branch-7' as 40 recorded in the audit log", Result(page), StringComparison.Ordinal));
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("enrol-sender", last.Action);
        Assert.Contains("(console, operator)", last.Actor, StringComparison.Ordinal);
        Assert.Equal($"sender 40 'branch-7', signing key {ManagementSignature.KeyIdOf(request.SignaturePublicKey)} (reason: console user 'olga' from 192.0.2.7: new office)", last.Target);
    }

    [Fact]
    public async Task An_operator_revokes_a_sender_with_a_reason_and_a_revocation_without_one_is_not_sent()
    {
        var page = Render<Senders>(p => p.AddCascadingValue(SignedIn("olga", ConsoleRole.Operator)));
        page.Find("#revoke-id").Input("2");
        var before = Controller.Host.Audit.LastSequence;
        await page.Find("button[aria-label='Revoke sender']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("a revocation needs a reason", Result(page), StringComparison.Ordinal));
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
        page.Find("#revoke-reason").Input("key leaked");
        await page.Find("button[aria-label='Revoke sender']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("revocation of sender 2 recorded in the audit log", Result(page), StringComparison.Ordinal));
        var last = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal(("revoke-sender", "sender 2 (reason: console user 'olga' from 192.0.2.7: key leaked)"), (last.Action, last.Target));
    }

    [Fact]
    public async Task A_viewer_is_refused_enrolment_and_revocation_on_the_server_and_nothing_reaches_the_audit_log()
    {
        var before = Controller.Host.Audit.LastSequence;
        var page = Render<Senders>(p => p.AddCascadingValue(SignedIn("vera", ConsoleRole.Viewer)));
        page.Find("#enrol-request").Input(MakeRequest("sneaky").ToJson());
        await page.Find("button[aria-label='Enrol sender']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.StartsWith("refused: enrol-sender needs the operator role", Result(page), StringComparison.Ordinal));
        page.Find("#revoke-id").Input("1");
        page.Find("#revoke-reason").Input("because");
        await page.Find("button[aria-label='Revoke sender']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.StartsWith("refused: revoke-sender needs the operator role", Result(page), StringComparison.Ordinal));
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    public static TheoryData<string, string, string> Malformed => new()
    {
        { "not json", "", "is not an enrolment request" },
        { "{}", "", "needs name, signaturePublicKey, agreementPublicKey and proof" },
        { "tampered-proof", "", "the proof of possession is not signed by the private half" },
        { "other-name", "", "the proof of possession is not signed by the private half" },
        { "valid", "abc", "the sender id is a whole number" },
        { "valid", "2147483648", "the sender id is a whole number" },
    };

    [Theory]
    [MemberData(nameof(Malformed))]
    public async Task A_malformed_enrolment_is_refused_before_the_controller(string json, string id, string expected)
    {
        var request = MakeRequest("branch-9");
        json = json switch
        {
            "valid" => request.ToJson(),
            "tampered-proof" => (request with { Proof = [.. request.Proof[..^1], (byte)(request.Proof[^1] ^ 1)] }).ToJson(),
            "other-name" => (request with { Name = "branch-10" }).ToJson(),
            _ => json,
        };
        var before = Controller.Host.Audit.LastSequence;
        var actions = Services.GetService(typeof(EnrolmentActions)) as EnrolmentActions;
        var result = await actions!.EnrolAsync((await SignedIn("olga", ConsoleRole.Operator)).User, json, id, "", CancellationToken.None);
        Assert.False(result.Sent);
        Assert.Contains(expected, result.Message, StringComparison.Ordinal);
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task An_operator_enrols_and_revokes_a_receiver_on_the_receivers_page_and_a_viewer_is_refused()
    {
        var request = MakeRequest("orders-in");
        var page = Render<Receivers>(p => p.AddCascadingValue(SignedIn("olga", ConsoleRole.Operator)));
        string Said() => page.Find("[data-testid=enrolment-result]").TextContent;
        page.Find("#enrol-request").Input(request.ToJson());
        page.Find("#enrol-id").Input("130");
        await page.Find("button[aria-label='Enrol receiver']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("enrolment of receiver 'orders-in' as 130 recorded in the audit log", Said(), StringComparison.Ordinal));
        var enrolled = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal("enrol-receiver", enrolled.Action);
        Assert.StartsWith($"receiver 130 'orders-in', signing key {ManagementSignature.KeyIdOf(request.SignaturePublicKey)}", enrolled.Target, StringComparison.Ordinal);

        page.Find("#revoke-id").Input("130");
        page.Find("#revoke-reason").Input("collector moved");
        await page.Find("button[aria-label='Revoke receiver']").ClickAsync(new());
        page.WaitForAssertion(() => Assert.Contains("revocation of receiver 130 recorded in the audit log", Said(), StringComparison.Ordinal));
        var revoked = Controller.Host.Audit.Tail(1).Single();
        Assert.Equal(("revoke-receiver", "receiver 130 (reason: console user 'olga' from 192.0.2.7: collector moved)"), (revoked.Action, revoked.Target));

        var before = Controller.Host.Audit.LastSequence;
        var viewer = Render<Receivers>(p => p.AddCascadingValue(SignedIn("vera", ConsoleRole.Viewer)));
        viewer.Find("#revoke-id").Input("100");
        viewer.Find("#revoke-reason").Input("because");
        await viewer.Find("button[aria-label='Revoke receiver']").ClickAsync(new());
        viewer.WaitForAssertion(() => Assert.StartsWith("refused: revoke-receiver needs the operator role", viewer.Find("[data-testid=enrolment-result]").TextContent, StringComparison.Ordinal));
        Assert.Equal(before, Controller.Host.Audit.LastSequence);
    }
}
