using System.Security.Cryptography;
using Google.Protobuf;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.PreSq.Tests;

/// <summary>Receiver acknowledgements in, ACKRES out, and the health report.</summary>
[Collection(PreSqCollection.Name)]
public sealed class ReceiverAndRelayTests(PreSqTestBed bed)
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    private PreSqHost Host => bed.Host;

    [Fact]
    public async Task A_receiver_ack_with_a_good_signature_is_queued_and_ordered_and_a_forged_one_is_refused()
    {
        using var receiver = bed.Deployment.Context.Keys(PartyRole.Receiver, TestDeployment.Receiver);
        using var stranger = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var channel = GrpcChannel.ForAddress(Host.Address, Host.TlsPin);
        var good = ReceiverAckCodec.Encode(TestDeployment.Receiver, [new DeliveredCursor(1, 7)], receiver.Signing!);
        var forged = ReceiverAckCodec.Encode(TestDeployment.Receiver, [new DeliveredCursor(1, 1_000_000)], stranger);
        var refusedBefore = Host.Metrics.ReceiverAcksBadSignature;

        var e = await Assert.ThrowsAsync<GrpcCallException>(() => AcknowledgeAsync(channel, forged));
        Assert.Equal(GrpcStatusCode.Unauthenticated, e.Status);
        Assert.Equal(refusedBefore + 1, Host.Metrics.ReceiverAcksBadSignature);

        var reply = await AcknowledgeAsync(channel, good);
        Assert.True(reply.Queued);
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedItems().Any(i => i.AsSpan().SequenceEqual(good)), Patience), "ack not ordered");
        Assert.DoesNotContain(bed.OrderedItems(), i => i.AsSpan().SequenceEqual(forged));

        var malformed = await Assert.ThrowsAsync<GrpcCallException>(() => AcknowledgeAsync(channel, good[..^1]));
        Assert.Equal(GrpcStatusCode.InvalidArgument, malformed.Status);
    }

    [Fact]
    public async Task Ackres_from_every_replica_reaches_the_stream_the_sender_last_authenticated_on()
    {
        var ctx = bed.Deployment.Context;
        using var sender = new TestSender(ctx, 6, bed.PreSqId);
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => ctx.Config.Replicas.All(r => bed.ReplicaApi.Subscriptions.ContainsKey((r.Id, bed.PreSqId))), Patience),
            "pre-SQ did not subscribe to every replica");
        Assert.Equal(0, bed.ReplicaApi.InvalidSubscriptions);

        await using var old = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        await old.SendAsync(sender.AckRequestFrame(lastSent: 0, nonce: 1));
        await using var current = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        // A replay of the old ACKREQ on another stream must not divert the ACKRES; a fresh frame does.
        var bindings = Host.Metrics.Bindings;
        await current.SendAsync(sender.AckRequestFrame(lastSent: 0, nonce: 1));
        await current.SendAsync(sender.Frame(1));
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(6).Count == 1, Patience));
        Assert.True(Host.Metrics.Bindings > bindings);

        var expected = new List<byte[]>();
        foreach (var r in ctx.Config.Replicas)
        {
            using var replicaKeys = ctx.Keys(PartyRole.Replica, r.Id);
            var ackres = AckResponseCodec.Encode(r.Id, 6, 0, 1, bed.PreSqId, 1, replicaKeys.Ring(MacChannel.ReplicaSender, 6)!);
            expected.Add(ackres);
            bed.ReplicaApi.Push(r.Id, bed.PreSqId, new AckResponseFrame { Sender = 6, Canonical = ByteString.CopyFrom(ackres) });
        }
        // A faulty replica naming another sender than the bytes do is not relayed.
        var malformedBefore = Host.Metrics.AckResponsesMalformed;
        bed.ReplicaApi.Push(0, bed.PreSqId, new AckResponseFrame { Sender = 6, Canonical = ByteString.CopyFrom(expected[1]) });

        var got = new List<byte[]>();
        for (var i = 0; i < expected.Count; i++)
        {
            got.Add((await current.NextEventAsync(Patience)).AckResponse.ToByteArray());
        }
        Assert.All(expected, x => Assert.Contains(got, g => g.AsSpan().SequenceEqual(x)));
        foreach (var (bytes, replica) in got.Select(g => (g, AckResponseCodec.Decode(g).Replica)))
        {
            Assert.True(AckResponseCodec.VerifyMac(bytes, sender.Keys.Ring(MacChannel.ReplicaSender, replica)!), "relayed ACKRES altered");
        }
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => Host.Metrics.AckResponsesMalformed == malformedBefore + 1, Patience));
        await Assert.ThrowsAsync<TimeoutException>(() => old.NextEventAsync(TimeSpan.FromMilliseconds(200)));
    }

    [Fact]
    public async Task Health_reports_the_component_its_id_and_its_counters()
    {
        using var channel = GrpcChannel.ForAddress(Host.Address, Host.TlsPin);
        var health = await channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser);
        Assert.Equal("pre-sq", health.Component);
        Assert.Equal(bed.PreSqId, health.Id);
        Assert.True(health.Healthy, health.Detail);
        foreach (var key in new[] { "passed", "dropped", "batches", "ordering_in_flight", "ordering_accepted", "warn_requests", "bound_senders",
            "open_streams", "replica_subscriptions_connected", "ordering_replicas_connected", "frames_shed", "connections_refused_per_source" })
        {
            Assert.True(health.Counters.ContainsKey(key), $"no counter {key}");
        }
        Assert.Equal(4, health.Counters["replica_subscriptions_connected"]);
        Assert.Equal(4, health.Counters["ordering_replicas_connected"]);
    }

    private static Task<AcknowledgementQueued> AcknowledgeAsync(GrpcChannel channel, byte[] ack) =>
        channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.Acknowledge,
            new ReceiverAcknowledgement { Canonical = ByteString.CopyFrom(ack) }, AcknowledgementQueued.Parser);
}
