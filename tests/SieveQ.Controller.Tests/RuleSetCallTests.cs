using System.Security.Cryptography;
using System.Text;
using Google.Protobuf;
using SieveQ.Controller.RuleSets;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Controller.Tests;

/// <summary>PushRuleSet, RollbackRuleSet and DryRunRuleSet against a controller whose deployment side is in memory.</summary>
public sealed class RuleSetCallTests : IAsyncLifetime
{
    private readonly ECDsa _commandKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private FakeRuleSetOrdering _ordering = null!;
    private ControllerFixture _f = null!;
    private RuleSetArchive _archive = null!;
    private bool _requireSigned;

    public async Task InitializeAsync() => await StartAsync(requireSigned: false);

    private async Task StartAsync(bool requireSigned)
    {
        _requireSigned = requireSigned;
        _ordering = new FakeRuleSetOrdering(_commandKey);
        _f = await ControllerFixture.StartAsync(dir =>
        {
            _archive = new RuleSetArchive(dir);
            _archive.Keep(Rules.RuleSetLoader.CompileUnsigned(Encoding.UTF8.GetBytes(TestRuleSets.Json(1))));
            return new RuleSetDesk(_ordering, _archive, _requireSigned);
        });
    }

    public async Task DisposeAsync()
    {
        await _f.DisposeAsync();
        _commandKey.Dispose();
    }

    private static byte[] Bytes(string s) => Encoding.UTF8.GetBytes(s);

    private async Task<AuditEntry> LastAuditAsync() => (await _f.Client(_f.Viewer).AuditTailAsync(1)).Entries.Single();

    [Fact]
    public async Task An_operator_pushes_a_rule_set_the_controller_signs_and_the_outcome_is_audited()
    {
        using var op = _f.Client(_f.Operator);
        var reply = await op.PushRuleSetAsync(Bytes(TestRuleSets.Json(2)), ReadOnlyMemory<byte>.Empty, "new routes");

        Assert.True(reply.Applied);
        Assert.Contains("activated version 2 in place of version 1 (agreed by f+1 replicas, via pre-sq-0)", reply.Status, StringComparison.Ordinal);
        var push = Assert.Single(_ordering.Pushes);
        Assert.Null(push.Sidecar);
        Assert.Equal(1, push.Against.ActiveVersion);
        var tail = (await op.AuditTailAsync(2)).Entries;
        Assert.All(tail, e => Assert.Equal("push-rule-set", e.Action));
        Assert.All(tail, e => Assert.Equal($"key {op.KeyId} (olga, operator) from 127.0.0.1", e.Actor));
        Assert.StartsWith("rule set test-rules version 2 (sha256 ", tail[1].Target, StringComparison.Ordinal);
        Assert.EndsWith("(reason: new routes)", tail[1].Target, StringComparison.Ordinal);
        Assert.Equal("submitted to the ordering (version 1 -> 2)", tail[0].Outcome);
        Assert.StartsWith("applied: activated version 2", tail[1].Outcome, StringComparison.Ordinal);
        Assert.Equal(reply.AuditSequence, tail[1].Sequence);
        Assert.NotEqual(0, tail[1].TimeUnixMs);
        // The pushed version is kept for the next diff.
        Assert.NotNull(_archive.Canonical(2));
    }

    [Fact]
    public async Task A_viewer_cannot_push_or_roll_back_and_the_attempt_is_audited()
    {
        using var viewer = _f.Client(_f.Viewer);
        var push = await Assert.ThrowsAsync<GrpcCallException>(() => viewer.PushRuleSetAsync(Bytes(TestRuleSets.Json(2)), ReadOnlyMemory<byte>.Empty, ""));
        Assert.Equal(GrpcStatusCode.PermissionDenied, push.Status);
        Assert.Equal("refused: role viewer is below operator", (await LastAuditAsync()).Outcome[..38]);
        var rollback = await Assert.ThrowsAsync<GrpcCallException>(() => viewer.RollbackRuleSetAsync(""));
        Assert.Equal(GrpcStatusCode.PermissionDenied, rollback.Status);
        Assert.Equal("rollback-rule-set", (await LastAuditAsync()).Action);
        var dry = await Assert.ThrowsAsync<GrpcCallException>(() => viewer.DryRunRuleSetAsync(new RuleSetDryRunRequest { Document = ByteString.CopyFrom(Bytes(TestRuleSets.Json(2))) }));
        Assert.Equal(GrpcStatusCode.PermissionDenied, dry.Status);
        Assert.Empty(_ordering.Pushes);
        Assert.Empty(_ordering.Rollbacks);
    }

    public static TheoryData<string, string> Malformed => new()
    {
        { "{ \"schema\": \"sieveq-ruleset/v1\", ", "JSON" },
        { "{ \"schema\": \"sieveq-ruleset/v1\", \"version\": 2 }", "rules" },
        { TestRuleSets.Json(2).Replace("\"receivers\": [2]", "\"receivers\": [9]", StringComparison.Ordinal), "9" },
        { "", "empty" },
    };

    [Theory]
    [MemberData(nameof(Malformed))]
    public async Task A_malformed_rule_set_is_refused_with_the_reason_and_never_ordered(string json, string mentions)
    {
        using var op = _f.Client(_f.Operator);
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => op.PushRuleSetAsync(Bytes(json), ReadOnlyMemory<byte>.Empty, ""));
        Assert.Equal(GrpcStatusCode.InvalidArgument, e.Status);
        Assert.Contains(mentions, e.Message, StringComparison.OrdinalIgnoreCase);
        Assert.StartsWith("refused: ", (await LastAuditAsync()).Outcome, StringComparison.Ordinal);
        Assert.Empty(_ordering.Pushes);
    }

    [Fact]
    public async Task A_rule_set_above_the_size_cap_is_refused()
    {
        using var op = _f.Client(_f.Operator);
        var big = TestRuleSets.Json(2).Replace("\"test-rules\"", "\"test-rules\", \"description\": \"" + new string('x', RuleSetCheck.MaxDocumentBytes) + "\"", StringComparison.Ordinal);
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => op.PushRuleSetAsync(Bytes(big), ReadOnlyMemory<byte>.Empty, ""));
        Assert.Equal(GrpcStatusCode.InvalidArgument, e.Status);
        Assert.Contains($"at most {RuleSetCheck.MaxDocumentBytes}", e.Message, StringComparison.Ordinal);
        Assert.Empty(_ordering.Pushes);
    }

    [Fact]
    public async Task A_version_not_above_the_running_one_is_refused()
    {
        _ordering.State = new RulesState(2, 1, 5);
        using var op = _f.Client(_f.Operator);
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => op.PushRuleSetAsync(Bytes(TestRuleSets.Json(2)), ReadOnlyMemory<byte>.Empty, ""));
        Assert.Equal(GrpcStatusCode.FailedPrecondition, e.Status);
        Assert.Contains("version 2 is not above the running version 2", e.Message, StringComparison.Ordinal);
        Assert.StartsWith("refused: version 2 is not above", (await LastAuditAsync()).Outcome, StringComparison.Ordinal);
        Assert.Empty(_ordering.Pushes);
    }

    [Fact]
    public async Task A_signature_must_be_by_the_administrator_key_and_is_passed_on()
    {
        using var op = _f.Client(_f.Operator);
        var json = TestRuleSets.Json(2);
        using var stranger = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var forged = await Assert.ThrowsAsync<GrpcCallException>(() => op.PushRuleSetAsync(Bytes(json), TestRuleSets.Sidecar(json, stranger), ""));
        Assert.Equal(GrpcStatusCode.InvalidArgument, forged.Status);
        Assert.Contains("not by the pinned administrator key", forged.Message, StringComparison.Ordinal);
        var changed = await Assert.ThrowsAsync<GrpcCallException>(() =>
            op.PushRuleSetAsync(Bytes(TestRuleSets.Json(2, "other-name")), TestRuleSets.Sidecar(json, _commandKey), ""));
        Assert.Contains("does not match", changed.Message, StringComparison.Ordinal);
        Assert.Empty(_ordering.Pushes);

        var sidecar = TestRuleSets.Sidecar(json, _commandKey);
        Assert.True((await op.PushRuleSetAsync(Bytes(json), sidecar, "")).Applied);
        Assert.Equal(sidecar, Assert.Single(_ordering.Pushes).Sidecar);
    }

    [Fact]
    public async Task An_unsigned_rule_set_is_refused_where_signatures_are_required()
    {
        await _f.DisposeAsync();
        await StartAsync(requireSigned: true);
        using var op = _f.Client(_f.Operator);
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => op.PushRuleSetAsync(Bytes(TestRuleSets.Json(2)), ReadOnlyMemory<byte>.Empty, ""));
        Assert.Equal(GrpcStatusCode.InvalidArgument, e.Status);
        Assert.Contains("requireSignedRuleSets", e.Message, StringComparison.Ordinal);
        Assert.Empty(_ordering.Pushes);
        Assert.True((await op.PushRuleSetAsync(Bytes(TestRuleSets.Json(2)), TestRuleSets.Sidecar(TestRuleSets.Json(2), _commandKey), "")).Applied);
    }

    [Fact]
    public async Task Rollback_needs_a_kept_version_and_switches_back_to_it()
    {
        using var op = _f.Client(_f.Operator);
        var nothing = await Assert.ThrowsAsync<GrpcCallException>(() => op.RollbackRuleSetAsync("oops"));
        Assert.Equal(GrpcStatusCode.FailedPrecondition, nothing.Status);
        Assert.Contains("nothing to roll back to", nothing.Message, StringComparison.Ordinal);
        Assert.Empty(_ordering.Rollbacks);

        await op.PushRuleSetAsync(Bytes(TestRuleSets.Json(2)), ReadOnlyMemory<byte>.Empty, "");
        var reply = await op.RollbackRuleSetAsync("oops");
        Assert.True(reply.Applied);
        Assert.Equal(2, Assert.Single(_ordering.Rollbacks).ActiveVersion);
        var entry = await LastAuditAsync();
        Assert.Equal("rollback-rule-set", entry.Action);
        Assert.Equal("running rule set (reason: oops)", entry.Target);
        Assert.StartsWith("applied: rolled back to version 1", entry.Outcome, StringComparison.Ordinal);
    }

    [Fact]
    public async Task When_the_replicas_do_not_agree_on_a_version_nothing_is_ordered()
    {
        _ordering.StateFailure = "fewer than f+1 = 2 replica-SQs agree on the running rule-set version";
        using var op = _f.Client(_f.Operator);
        var reply = await op.PushRuleSetAsync(Bytes(TestRuleSets.Json(2)), ReadOnlyMemory<byte>.Empty, "");
        Assert.False(reply.Applied);
        Assert.Contains("fewer than f+1", reply.Status, StringComparison.Ordinal);
        Assert.Empty(_ordering.Pushes);
    }

    [Fact]
    public async Task A_dry_run_names_the_deciding_rule_per_sample_and_gives_both_versions_for_a_diff()
    {
        using var op = _f.Client(_f.Operator);
        var request = new RuleSetDryRunRequest { Document = ByteString.CopyFrom(Bytes(TestRuleSets.Json(2))) };
        request.Samples.Add(new RuleSetSample { Sender = 1, Receiver = 2, Payload = ByteString.CopyFromUtf8("reading 42") });
        request.Samples.Add(new RuleSetSample { Sender = 1, Receiver = 2, Payload = ByteString.CopyFromUtf8("malware inside") });
        request.Samples.Add(new RuleSetSample { Sender = 7, Receiver = 2, Payload = ByteString.CopyFromUtf8("hello") });
        var auditBefore = _f.Host.Audit.LastSequence;

        var reply = await op.DryRunRuleSetAsync(request);

        Assert.True(reply.Valid, reply.Error);
        Assert.Equal(2, reply.Version);
        Assert.Equal("test-rules", reply.Name);
        Assert.Equal([(true, "one-to-two"), (false, "no-malware"), (false, "default-deny")], reply.Outcomes.Select(o => (o.Allowed, o.Rule)));
        Assert.Equal(1, reply.RunningVersion);
        Assert.Contains("\"version\":1", reply.RunningCanonical, StringComparison.Ordinal);
        Assert.Contains("\"version\":2", reply.Canonical, StringComparison.Ordinal);
        // Nothing reached the deployment, nothing was recorded.
        Assert.Empty(_ordering.Pushes);
        Assert.Equal(auditBefore, _f.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task A_dry_run_of_a_broken_rule_set_reports_the_check_instead_of_deciding()
    {
        using var op = _f.Client(_f.Operator);
        var reply = await op.DryRunRuleSetAsync(new RuleSetDryRunRequest { Document = ByteString.CopyFromUtf8("{ \"schema\": \"sieveq-ruleset/v1\", \"version\": 2 }") });
        Assert.False(reply.Valid);
        Assert.Contains("rules", reply.Error, StringComparison.Ordinal);
        Assert.Empty(reply.Outcomes);

        var tooMany = new RuleSetDryRunRequest { Document = ByteString.CopyFrom(Bytes(TestRuleSets.Json(2))) };
        for (var i = 0; i <= RuleSetDryRun.MaxSamples; i++)
        {
            tooMany.Samples.Add(new RuleSetSample { Sender = 1, Receiver = 2 });
        }
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => op.DryRunRuleSetAsync(tooMany));
        Assert.Equal(GrpcStatusCode.InvalidArgument, e.Status);
    }

    [Fact]
    public async Task Without_a_command_key_a_push_is_recorded_but_not_applied()
    {
        await using var bare = await ControllerFixture.StartAsync();
        using var op = bare.Client(bare.Operator);
        var reply = await op.PushRuleSetAsync(Bytes(TestRuleSets.Json(2)), ReadOnlyMemory<byte>.Empty, "");
        Assert.False(reply.Applied);
        Assert.Equal(ManagementApi.NoCommandKey, reply.Status);
    }
}
