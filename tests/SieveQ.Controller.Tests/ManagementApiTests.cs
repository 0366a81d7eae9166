using Google.Protobuf;
using SieveQ.Controller.Access;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Controller.Tests;

public sealed class ManagementApiTests
{
    /// <summary>Every method, its lowest role, and a body for it.</summary>
    public static TheoryData<string> Methods => [ControllerNames.Status, ControllerNames.AuditTail, ControllerNames.QuarantineSender, ControllerNames.ReadmitSender,
        ControllerNames.RecordConsoleChange, ControllerNames.PushRuleSet, ControllerNames.RollbackRuleSet, ControllerNames.DryRunRuleSet,
        ControllerNames.EnrolSender, ControllerNames.RevokeSender, ControllerNames.StartPreSq, ControllerNames.StopPreSq, ControllerNames.ReplacePreSq];

    private static ManagementRole Required(string method) =>
        method is ControllerNames.StartPreSq or ControllerNames.StopPreSq or ControllerNames.ReplacePreSq ? ManagementRole.Administrator
        : method is ControllerNames.QuarantineSender or ControllerNames.ReadmitSender or ControllerNames.RecordConsoleChange
            or ControllerNames.PushRuleSet or ControllerNames.RollbackRuleSet or ControllerNames.DryRunRuleSet
            or ControllerNames.EnrolSender or ControllerNames.RevokeSender ? ManagementRole.Operator : ManagementRole.Viewer;

    private static IMessage Body(string method) => method switch
    {
        ControllerNames.Status => new ControllerStatusRequest(),
        ControllerNames.AuditTail => new AuditTailRequest { Count = 5 },
        ControllerNames.PushRuleSet => new RuleSetPushRequest { Document = ByteString.CopyFromUtf8(TestRuleSets.Json(2)), Reason = "test" },
        ControllerNames.RollbackRuleSet => new RuleSetRollbackRequest { Reason = "test" },
        ControllerNames.DryRunRuleSet => new RuleSetDryRunRequest { Document = ByteString.CopyFromUtf8(TestRuleSets.Json(2)) },
        ControllerNames.RecordConsoleChange => new ConsoleChangeRequest { Action = "console-set-role", Target = "console user 'a' set the role of account 'b'", Outcome = "role viewer -> operator" },
        ControllerNames.EnrolSender => EnrolmentCallTests.ValidRequest(),
        ControllerNames.StartPreSq or ControllerNames.StopPreSq or ControllerNames.ReplacePreSq => new PreSqActionRequest { PreSq = 1, Reason = "test" },
        _ => new SenderActionRequest { Sender = 3, Reason = "test" },
    };

    /// <summary>Sends a request to <paramref name="method"/> and returns the status it ended with.</summary>
    private static async Task<GrpcStatusCode> SendAsync(ManagementClient client, string method, SignedManagementRequest request)
    {
        try
        {
            // Every reply type parses as an empty message of any other: the status is what matters here.
            await client.SendAsync(method, request, ManagementActionReply.Parser);
            return GrpcStatusCode.Ok;
        }
        catch (GrpcCallException e)
        {
            return e.Status;
        }
    }

    [Theory]
    [MemberData(nameof(Methods))]
    public async Task Unauthenticated_callers_are_refused(string method)
    {
        await using var f = await ControllerFixture.StartAsync();
        using var client = f.Client(f.Administrator);
        var signed = client.Sign(method, Body(method));
        // No key, no signature: what a caller without the key can send.
        var bare = new SignedManagementRequest { Body = signed.Body, TimestampMs = signed.TimestampMs, Nonce = signed.Nonce };
        Assert.Equal(GrpcStatusCode.Unauthenticated, await SendAsync(client, method, bare));
        // The administrator's key id, but no signature by its key.
        Assert.Equal(GrpcStatusCode.Unauthenticated, await SendAsync(client, method, new SignedManagementRequest(signed) { Signature = ByteString.CopyFrom(new byte[64]) }));
        // A signed request whose body was changed on the way.
        var changed = Body(method) is SenderActionRequest ? new SenderActionRequest { Sender = 4, Reason = "test" }.ToByteString() : ByteString.CopyFrom(1, 2);
        Assert.Equal(GrpcStatusCode.Unauthenticated, await SendAsync(client, method, new SignedManagementRequest(client.Sign(method, Body(method))) { Body = changed }));
        // A request signed for another method.
        var other = method == ControllerNames.Status ? ControllerNames.AuditTail : ControllerNames.Status;
        Assert.Equal(GrpcStatusCode.Unauthenticated, await SendAsync(client, method, client.Sign(other, Body(method))));
        Assert.Equal(0, f.Host.Audit.Tail(100).Count(r => r.Actor.StartsWith("key", StringComparison.Ordinal)));
    }

    [Theory]
    [MemberData(nameof(Methods))]
    public async Task A_key_that_is_not_pinned_is_refused(string method)
    {
        await using var f = await ControllerFixture.StartAsync();
        using var client = f.Client(f.Unpinned);
        Assert.Equal(GrpcStatusCode.Unauthenticated, await SendAsync(client, method, client.Sign(method, Body(method))));
    }

    [Theory]
    [MemberData(nameof(Methods))]
    public async Task A_replayed_or_stale_request_is_refused(string method)
    {
        await using var f = await ControllerFixture.StartAsync();
        using var client = f.Client(f.Administrator);
        var request = client.Sign(method, Body(method));
        Assert.Equal(GrpcStatusCode.Ok, await SendAsync(client, method, request));
        Assert.Equal(GrpcStatusCode.Unauthenticated, await SendAsync(client, method, request));
        using var late = f.Client(f.Administrator, new ShiftedTime(TimeSpan.FromMinutes(-5)));
        Assert.Equal(GrpcStatusCode.Unauthenticated, await SendAsync(late, method, late.Sign(method, Body(method))));
    }

    [Theory]
    [MemberData(nameof(Methods))]
    public async Task Each_role_gets_exactly_what_it_may(string method)
    {
        await using var f = await ControllerFixture.StartAsync();
        foreach (var (key, role) in new[] { (f.Viewer, ManagementRole.Viewer), (f.Operator, ManagementRole.Operator), (f.Administrator, ManagementRole.Administrator) })
        {
            using var client = f.Client(key);
            var expected = role >= Required(method) ? GrpcStatusCode.Ok : GrpcStatusCode.PermissionDenied;
            Assert.Equal(expected, await SendAsync(client, method, client.Sign(method, Body(method))));
        }
    }

    [Fact]
    public async Task Status_lists_the_components_and_the_caller()
    {
        await using var f = await ControllerFixture.StartAsync();
        using var client = f.Client(f.Viewer);
        var status = await client.StatusAsync();
        Assert.Equal(["replica-sq-0", "pre-sq-4"], status.Components.Select(c => c.Name));
        Assert.Equal(7, status.Components[0].Counters["ordered"]);
        Assert.Contains("victor, viewer", status.Caller, StringComparison.Ordinal);
        Assert.Equal(f.Host.Audit.LastSequence, status.AuditLastSequence);
    }

    [Fact]
    public async Task Accepted_and_refused_changes_are_audited_with_the_actor_and_not_claimed_applied()
    {
        await using var f = await ControllerFixture.StartAsync();
        using var op = f.Client(f.Operator);
        using var viewer = f.Client(f.Viewer);
        var quarantined = await op.QuarantineSenderAsync(3, "flooding");
        Assert.False(quarantined.Applied);
        Assert.Equal(ManagementApi.NoCommandKey, quarantined.Status);
        var readmitted = await op.ReadmitSenderAsync(3, "");
        var refused = await Assert.ThrowsAsync<GrpcCallException>(() => viewer.QuarantineSenderAsync(5, "curious"));
        Assert.Equal(GrpcStatusCode.PermissionDenied, refused.Status);

        var tail = (await viewer.AuditTailAsync(50)).Entries;
        var q = Assert.Single(tail, e => e.Sequence == quarantined.AuditSequence);
        Assert.Equal("quarantine-sender", q.Action);
        Assert.Equal($"key {op.KeyId} (olga, operator) from 127.0.0.1", q.Actor);
        Assert.Equal("sender 3 (reason: flooding)", q.Target);
        var r = Assert.Single(tail, e => e.Sequence == readmitted.AuditSequence);
        Assert.Equal("readmit-sender", r.Action);
        Assert.Equal($"key {op.KeyId} (olga, operator) from 127.0.0.1", r.Actor);
        var denied = Assert.Single(tail, e => e.Actor.Contains(viewer.KeyId, StringComparison.Ordinal));
        Assert.Equal("sender 5 (reason: curious)", denied.Target);
        Assert.StartsWith("refused: role viewer is below operator", denied.Outcome, StringComparison.Ordinal);
        // The reply's chain is the log's chain.
        for (var i = 1; i < tail.Count; i++)
        {
            Assert.Equal(tail[i - 1].Hash, tail[i].PreviousHash);
        }
    }

    [Fact]
    public void The_nonce_cache_is_bounded_and_forgets_only_stale_nonces()
    {
        using var key = System.Security.Cryptography.ECDsa.Create(System.Security.Cryptography.ECCurve.NamedCurves.nistP256);
        var time = new ShiftedTime(TimeSpan.Zero);
        using var authenticator = new CallerAuthenticator([new PinnedCaller("a", ManagementRole.Viewer, key.ExportSubjectPublicKeyInfo())],
            new CallerAuthenticatorOptions { MaxNonces = 2, Freshness = TimeSpan.FromSeconds(10), Time = time });
        using var client = new ManagementClient(new Uri("http://127.0.0.1:1"), key, time);
        var method = ControllerNames.FullMethod(ControllerNames.Status);
        authenticator.Authenticate(method, client.Sign(ControllerNames.Status, new ControllerStatusRequest()));
        authenticator.Authenticate(method, client.Sign(ControllerNames.Status, new ControllerStatusRequest()));
        var full = Assert.Throws<GrpcCallException>(() => authenticator.Authenticate(method, client.Sign(ControllerNames.Status, new ControllerStatusRequest())));
        Assert.Equal(GrpcStatusCode.ResourceExhausted, full.Status);
        Assert.Equal(2, authenticator.RememberedNonces);
        time.Shift = TimeSpan.FromSeconds(30);
        authenticator.Authenticate(method, client.Sign(ControllerNames.Status, new ControllerStatusRequest()));
        Assert.Equal(1, authenticator.RememberedNonces);
    }
}
