using Google.Protobuf;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SieveQ.PreSq;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Hosting.Keys;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>
/// Quarantine and readmission end to end over loopback: signed by the deployment's administrator key as the controller
/// does (<see cref="AdminCommandSubmitter"/>), carried by a real pre-SQ host into the ordering of four real replica-SQ
/// hosts, and enforced by every replica.
/// </summary>
public sealed class AdminCommandTests : IClassFixture<RulesReplicaSqCluster>
{
    private readonly RulesReplicaSqCluster _c;

    public AdminCommandTests(RulesReplicaSqCluster c) => _c = c;

    [Fact]
    public async Task A_sender_quarantined_through_a_pre_sq_is_refused_by_every_replica_and_taken_once_after_readmission()
    {
        var cfg = _c.Context.Config;
        await using var preSq = PreSqHost.Create(_c.Context, cfg.PreSqs[1].Id);
        await preSq.StartAsync();
        using var admin = new PemFileKeyStore(Path.Combine(_c.Directory, "keys")).OpenSigningKey(DeploymentRules.AdministratorKeyName);
        var commands = new AdminCommandSubmitter(cfg, admin, TimeSpan.FromSeconds(30));
        const int sender = 2;
        var appliedBefore = _c.Hosts[0].Health().Counters.GetValueOrDefault("admin.commands_applied");

        var quarantined = await commands.ApplyAsync(AdminOp.QuarantineSender, sender);
        Assert.True(quarantined.Applied, quarantined.Status);
        Assert.Equal(cfg.PreSqs[1].Name, quarantined.Via);
        await _c.AssertAllReplicasAsync("admin.quarantined.senders", 1);

        var held = _c.Message(sender, _c.NextSeq(sender), "while quarantined"u8.ToArray());
        var refused = await _c.SubmitAsync(held);
        Assert.Equal(0, refused.Accepted);
        Assert.Equal([new UntakenMessage(sender, _c.LastSeq(sender))], refused.Untaken);
        await _c.AssertAllReplicasAsync("drop.ReplicaAdmission.AdminQuarantined", 1);
        await _c.AssertAllReplicasAsync($"queue.{RulesReplicaSqCluster.Receiver}", 0);

        var readmitted = await commands.ApplyAsync(AdminOp.ReadmitSender, sender);
        Assert.True(readmitted.Applied, readmitted.Status);
        await _c.AssertAllReplicasAsync("admin.quarantined.senders", 0);
        Assert.Equal(new ExecuteResult(1, 0, 0), await _c.SubmitAsync(held));
        Assert.Equal(new ExecuteResult(0, 0, 1), await _c.SubmitAsync(held));
        await _c.AssertAllReplicasAsync($"queue.{RulesReplicaSqCluster.Receiver}", 1);

        await _c.AssertAllReplicasAsync("admin.commands_applied", appliedBefore + 2);
        Assert.Equal(2, preSq.Health().Counters["admin_commands_ordered"]);

        // Only the pinned key is taken; and a submitter whose clock is behind the replicas' last nonce goes above it.
        using var intruder = System.Security.Cryptography.ECDsa.Create(System.Security.Cryptography.ECCurve.NamedCurves.nistP256);
        Assert.Throws<DeploymentException>(() => new AdminCommandSubmitter(cfg, intruder));
        using (var channel = GrpcChannel.ForAddress(new Uri(cfg.PreSqs[1].Url), cfg.PreSqs[1].Pin()))
        {
            var forged = AdminCommandCodec.Sign(AdminOp.ReadmitSender, sender, long.MaxValue, intruder);
            var e = await Assert.ThrowsAsync<GrpcCallException>(() => channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.SubmitAdminCommand,
                new AdminCommandSubmission { Canonical = ByteString.CopyFrom(forged) }, AdminCommandOutcome.Parser));
            Assert.Equal(GrpcStatusCode.Unauthenticated, e.Status);
            var malformed = await Assert.ThrowsAsync<GrpcCallException>(() => channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.SubmitAdminCommand,
                new AdminCommandSubmission { Canonical = ByteString.CopyFrom(forged.AsSpan(0, 20)) }, AdminCommandOutcome.Parser));
            Assert.Equal(GrpcStatusCode.InvalidArgument, malformed.Status);
            Assert.Equal(2, preSq.Health().Counters["admin_commands_refused"]);
        }

        // A command from the future sets the replicas' nonce far ahead; the submitter's wall-clock nonce is then refused once and retried above it.
        var future = AdminCommandCodec.Sign(AdminOp.ReadmitPreSq, cfg.PreSqs[0].Id, DateTimeOffset.UtcNow.AddDays(1).ToUnixTimeMilliseconds(), admin);
        var ahead = AdminCommandResultCodec.Decode((await _c.SubmitRawAsync(future)).Span);
        Assert.True(ahead.Applied, ahead.Reason);
        var outcome = await commands.ApplyAsync(AdminOp.ReadmitSender, 1);
        Assert.True(outcome.Applied, outcome.Status);
        Assert.Equal(4, preSq.Health().Counters["admin_commands_ordered"]);
    }
}
