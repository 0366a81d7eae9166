using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Fixed routes changed through the ordering (administrator command ops 7 and 8): a route allowed is taken on every
/// replica from that point of the agreed order, a removed one refused, a new limit applies to the next message; a
/// refused change says why and leaves the agreed state as it was; the table survives a snapshot; a deployment with
/// signed rule sets refuses route changes; a quarantine signature cannot pass for a route change.
/// </summary>
public sealed class RouteCommandTests(TestWorld w) : AdministeredReplicas(w), IClassFixture<TestWorld>
{
    private readonly ECDsa _intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256);

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _intruder.Dispose();
        }
        base.Dispose(disposing);
    }

    /// <summary>Only sender 1 to receiver 100, up to 1,000 bytes, in the deployment file.</summary>
    private SieveReplicaApplication NewReplica(IApplicationRules? rules = null) => ReplicaWith(rules ?? new RoutePolicy([new Route(1, 100, 1_000)]));

    private List<SieveReplicaApplication> Replicas() => ReplicasWith(() => new RoutePolicy([new Route(1, 100, 1_000)]));

    private byte[] Allow(int sender, int receiver, int max, long nonce, ECDsa? admin = null) =>
        AdminCommandCodec.SignRoute(AdminOp.AllowRoute, sender, receiver, max, nonce, admin ?? Admin);

    private byte[] Remove(int sender, int receiver, long nonce) => AdminCommandCodec.SignRoute(AdminOp.RemoveRoute, sender, receiver, 0, nonce, Admin);

    private ExecuteResult Send(IReadOnlyList<SieveReplicaApplication> replicas, int sender, long seq, int receiver, int bytes) =>
        TestWorld.AgreedExecuteResult(Decide(replicas, 10, W.Message(sender, seq, receiver, new string('x', bytes))));

    [Fact]
    public void A_route_allowed_through_the_ordering_is_taken_on_every_replica_and_refused_once_removed()
    {
        var replicas = Replicas();
        var rejected = replicas[0].Drops[SieveStage.Rules, DropReason.RuleDenied];
        Assert.Equal(new ExecuteResult(0, 0, 1), Send(replicas, 1, 1, 101, 10));
        Assert.Equal(rejected + 1, replicas[0].Drops[SieveStage.Rules, DropReason.RuleDenied]);

        var allowed = Order(replicas, Allow(1, 101, 500, 1));
        Assert.True(allowed.Applied, allowed.Reason);
        Assert.Equal("allow route sender 1 -> receiver 101 (up to 500 bytes): applied (a new route) (route change 1)", allowed.Reason);
        Assert.Equal(new ExecuteResult(1, 0, 0), Send(replicas, 1, 2, 101, 10));
        // The new route's limit holds.
        Assert.Equal(new ExecuteResult(0, 0, 1), Send(replicas, 1, 3, 101, 600));

        var raised = Order(replicas, Allow(1, 101, 800, 2));
        Assert.Equal("allow route sender 1 -> receiver 101 (up to 800 bytes): applied (the route's limit was 500 bytes) (route change 2)", raised.Reason);
        Assert.Equal(new ExecuteResult(1, 0, 0), Send(replicas, 1, 4, 101, 600));

        var removed = Order(replicas, Remove(1, 100, 3));
        Assert.True(removed.Applied, removed.Reason);
        Assert.Equal(new ExecuteResult(0, 0, 1), Send(replicas, 1, 5, 100, 10));
        Assert.All(replicas, r => Assert.Equal([new Route(1, 101, 800)], ((RoutePolicy)r.Rules).Current()));
        var snapshots = replicas.Select(r => r.TakeSnapshot()).ToList();
        Assert.All(snapshots, s => Assert.Equal(snapshots[0], s));
    }

    public static TheoryData<string> Refusals => ["forged admin signature", "sender not enrolled", "receiver not enrolled", "no such route", "replayed nonce"];

    [Theory]
    [MemberData(nameof(Refusals))]
    public void A_refused_route_change_says_why_and_leaves_the_agreed_state_unchanged(string refusal)
    {
        var replicas = Replicas();
        Assert.True(Order(replicas, Allow(2, 100, 100, 10)).Applied);
        var (command, reason) = refusal switch
        {
            "forged admin signature" => (Allow(1, 101, 100, 11, _intruder), "refused: not signed by the deployment's administrator key"),
            "sender not enrolled" => (Allow(9, 100, 100, 11), "refused: allow route sender 9 -> receiver 100 (up to 100 bytes): sender 9 is not enrolled"),
            "receiver not enrolled" => (Allow(1, 102, 100, 11), "refused: allow route sender 1 -> receiver 102 (up to 100 bytes): receiver 102 is not enrolled"),
            "no such route" => (Remove(3, 101, 11), "refused: remove route sender 3 -> receiver 101: there is no such route"),
            _ => (Allow(1, 101, 100, 10), "refused: nonce 10 is not above the last applied administrator command's (10): a replay or an overtaken command"),
        };
        var result = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, command));
        Assert.False(result.Applied);
        Assert.Equal(reason, result.Reason);
        Assert.Equal(10, result.LastNonce);
        Assert.All(replicas, r => Assert.Equal([new Route(1, 100, 1_000), new Route(2, 100, 100)], ((RoutePolicy)r.Rules).Current()));
        Assert.All(replicas, r => Assert.Equal(1, ((RoutePolicy)r.Rules).Changes));
    }

    [Fact]
    public void A_quarantine_signature_cannot_pass_for_a_route_change()
    {
        // A quarantine of sender 1 with a receiver and limit appended: same key, other purpose, so the signature fails.
        var quarantine = AdminCommandCodec.Sign(AdminOp.QuarantineSender, 1, 1, Admin);
        var region = quarantine[..^EnvelopeLimits.SignatureBytes];
        byte[] forged = [.. region, 101, 0, 0, 0, 0, 4, 0, 0, .. quarantine[^EnvelopeLimits.SignatureBytes..]];
        forged[1] = (byte)AdminOp.AllowRoute;
        var replicas = Replicas();
        var result = Order(replicas, forged);
        Assert.False(result.Applied);
        Assert.Equal("refused: not signed by the deployment's administrator key", result.Reason);
        Assert.All(replicas, r => Assert.Null(((RoutePolicy)r.Rules).Limit(1, 101)));
    }

    [Fact]
    public void Route_changes_survive_a_snapshot_and_a_malformed_table_changes_nothing()
    {
        var source = NewReplica();
        Assert.True(Order([source], Allow(3, 101, 42, 1)).Applied);
        Assert.True(Order([source], Remove(1, 100, 2)).Applied);
        var snapshot = source.TakeSnapshot();

        var restored = NewReplica();
        restored.RestoreSnapshot(snapshot);
        var routes = (RoutePolicy)restored.Rules;
        Assert.Equal([new Route(3, 101, 42)], routes.Current());
        Assert.Equal(2, routes.Changes);
        Assert.Equal(snapshot, restored.TakeSnapshot());

        // A table out of order, or with a limit above the envelope's, is refused before anything is replaced.
        var state = routes.SnapshotState();
        var policy = new RoutePolicy([new Route(1, 100, 5)]);
        var tooLarge = (byte[])state.Clone();
        BitConverter.GetBytes(EnvelopeLimits.MaxDataBytes + 1).CopyTo(tooLarge, 8 + 4 + 8);
        Assert.Throws<MalformedEnvelopeException>(() => policy.RestoreState(tooLarge));
        Assert.Throws<MalformedEnvelopeException>(() => policy.RestoreState(state.AsSpan(0, state.Length - 1)));
        Assert.Equal([new Route(1, 100, 5)], policy.Current());
        policy.RestoreState(state);
        Assert.Equal([new Route(3, 101, 42)], policy.Current());
        // An empty state is the deployment file's routes again.
        policy.RestoreState([]);
        Assert.Equal([new Route(1, 100, 5)], policy.Current());
    }

    [Fact]
    public void A_deployment_with_signed_rule_sets_refuses_route_changes()
    {
        var replica = NewReplica(new DenyEverything());
        var result = Order([replica], Allow(1, 101, 100, 1));
        Assert.False(result.Applied);
        Assert.Contains("this deployment runs signed rule sets", result.Reason, StringComparison.Ordinal);
        Assert.Equal(0, result.LastNonce);
    }

    [Fact]
    public void The_codec_round_trips_route_changes_and_refuses_a_limit_above_the_envelope()
    {
        var allow = AdminCommandCodec.Decode(Allow(4, 100, 1234, 9));
        Assert.Equal((AdminOp.AllowRoute, 4, 100, 1234, 9L), (allow.Op, allow.Target, allow.RouteReceiver, allow.RouteMaxBytes, allow.Nonce));
        var remove = AdminCommandCodec.Decode(Remove(4, 101, 10));
        Assert.Equal((AdminOp.RemoveRoute, 4, 101, 0), (remove.Op, remove.Target, remove.RouteReceiver, remove.RouteMaxBytes));
        var bytes = Allow(4, 100, 1234, 9);
        BitConverter.GetBytes(EnvelopeLimits.MaxDataBytes + 1).CopyTo(bytes, 1 + 1 + 4 + 8 + 4);
        var e = Assert.Throws<MalformedEnvelopeException>(() => AdminCommandCodec.Decode(bytes));
        Assert.Contains("size limit", e.Message, StringComparison.Ordinal);
        Assert.Throws<MalformedEnvelopeException>(() => AdminCommandCodec.Decode(bytes[..^1]));
        Assert.Throws<ArgumentException>(() => AdminCommandCodec.Sign(AdminOp.AllowRoute, 4, 1, Admin));
    }

    private sealed class DenyEverything : IApplicationRules
    {
        public RuleVerdict Evaluate(in RuleInput input) => RuleVerdict.Deny("nothing passes");

        public byte[] SnapshotState() => [];

        public void RestoreState(ReadOnlySpan<byte> state)
        {
        }
    }
}
