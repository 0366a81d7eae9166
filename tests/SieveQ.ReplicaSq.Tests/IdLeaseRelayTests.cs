using System.Security.Cryptography;
using Google.Protobuf;
using SieveQ.Deployment;
using SieveQ.PreSq;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>
/// Id leases end to end over loopback: a real pre-SQ host checks a lease request (structure, enrolment, signature, time)
/// before it spends an ordering slot, and four real replica-SQ hosts decide it in agreed execution; a second holder is
/// answered with the first one's name.
/// </summary>
public sealed class IdLeaseRelayTests : IClassFixture<RulesReplicaSqCluster>
{
    private readonly RulesReplicaSqCluster _c;

    public IdLeaseRelayTests(RulesReplicaSqCluster c) => _c = c;

    [Fact]
    public async Task A_lease_is_granted_through_a_pre_sq_a_second_holder_is_named_the_first_and_bad_requests_never_reach_the_ordering()
    {
        var cfg = _c.Context.Config;
        await using var preSq = PreSqHost.Create(_c.Context, cfg.PreSqs[0].Id);
        await preSq.StartAsync();
        using var channel = GrpcChannel.ForAddress(new Uri(cfg.PreSqs[0].Url), cfg.PreSqs[0].Pin());
        using var keys = _c.Context.Keys(PartyRole.Sender, 3);
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

        Task<IdLeaseOutcome> Submit(byte[] request) => channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.SubmitIdLease,
            new IdLeaseSubmission { Canonical = ByteString.CopyFrom(request) }, IdLeaseOutcome.Parser);
        byte[] Hold(string label, long at, ECDsa? key = null, int sender = 3) =>
            IdLeaseCodec.EncodeRequest(LeaseParty.Sender, sender, LeaseOp.Hold, SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(label))[..16], label, at, key ?? keys.Signing!);

        var granted = IdLeaseCodec.DecodeResult((await Submit(Hold("first host", now))).Canonical.Memory);
        Assert.Equal(LeaseOutcome.Granted, granted.Outcome);
        var second = IdLeaseCodec.DecodeResult((await Submit(Hold("second host", now + 1))).Canonical.Memory);
        Assert.Equal((LeaseOutcome.HeldByOther, "first host"), (second.Outcome, second.Label));

        using var intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var forged = await Assert.ThrowsAsync<GrpcCallException>(() => Submit(Hold("intruder", now + 2, intruder)));
        Assert.Equal(GrpcStatusCode.Unauthenticated, forged.Status);
        var stranger = await Assert.ThrowsAsync<GrpcCallException>(() => Submit(Hold("stranger", now + 2, intruder, sender: 999)));
        Assert.Equal(GrpcStatusCode.PermissionDenied, stranger.Status);
        var stale = await Assert.ThrowsAsync<GrpcCallException>(() => Submit(Hold("first host", now - 600_000)));
        Assert.Equal(GrpcStatusCode.InvalidArgument, stale.Status);
        var malformed = await Assert.ThrowsAsync<GrpcCallException>(() => Submit([0x09, 1, 2]));
        Assert.Equal(GrpcStatusCode.InvalidArgument, malformed.Status);

        var counters = preSq.Health().Counters;
        Assert.Equal(2, counters["id_leases_ordered"]);
        Assert.Equal(4, counters["id_leases_refused"]);
    }
}
