using System.Security.Cryptography;
using System.Threading.Channels;
using Google.Protobuf;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Transport;
using static SieveQ.ReplicaSq.Tests.ReplicaSqCluster;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>What a compromised replica-SQ's gate does with everything owed to receivers: withholds it, counting each.</summary>
public sealed class SilentTowardsReceivers : IReceiverOutputGate
{
    private long _batches;
    private long _fetches;

    public long BatchesWithheld => Interlocked.Read(ref _batches);

    public long FetchesHeld => Interlocked.Read(ref _fetches);

    public bool Sends(OutboxBatch agreed)
    {
        Interlocked.Increment(ref _batches);
        return false;
    }

    public bool Answers(int receiver)
    {
        Interlocked.Increment(ref _fetches);
        return false;
    }
}

/// <summary>The four replica-SQs, replica <see cref="Silent"/> with a gate that withholds everything owed to receivers.</summary>
public sealed class WithholdingReplicaSqCluster : ReplicaSqCluster
{
    public const int Silent = 3;

    public SilentTowardsReceivers Gate { get; } = new();

    protected override IReceiverOutputGate? ReceiverGate(int replica) => replica == Silent ? Gate : null;
}

/// <summary>
/// The seam the withholding-replica attack (tests/SieveQ.Attacks) plugs into a real replica-SQ: a replica-SQ whose gate
/// withholds orders as before, streams the receiver nothing and leaves its body fetches unanswered.
/// </summary>
public sealed class ReceiverOutputGateTests(WithholdingReplicaSqCluster cluster) : IClassFixture<WithholdingReplicaSqCluster>
{
    private const int Honest = 0;
    private const int Silent = WithholdingReplicaSqCluster.Silent;

    [Fact]
    public async Task A_replica_sq_whose_gate_withholds_streams_the_receiver_nothing_and_holds_its_body_fetches_while_another_answers()
    {
        const int sender = 1;
        var frames = Channel.CreateUnbounded<(int, ReplicaOutputFrame)>();
        var subscribed = cluster.Hosts.Select(h => h.Metrics.ReceiverSubscriptions).ToArray();
        await using var silent = await SubscribeAsync(Silent, frames);
        await using var honest = await SubscribeAsync(Honest, frames);
        await EventuallyAsync(() => cluster.Hosts[Silent].Metrics.ReceiverSubscriptions > subscribed[Silent]
            && cluster.Hosts[Honest].Metrics.ReceiverSubscriptions > subscribed[Honest], "both replicas took the subscription");

        var data = RandomNumberGenerator.GetBytes(300);
        var seq = cluster.NextSeq(sender);
        Assert.Equal(1, (await cluster.SubmitAsync(cluster.Message(sender, seq, data))).Accepted);

        // The honest replica's vote comes; the silent one executed the same batch and its gate kept every frame of it.
        using var wait = new CancellationTokenSource(TimeSpan.FromSeconds(15));
        OutputItem? vote = null;
        while (vote is null)
        {
            var (replica, frame) = await frames.Reader.ReadAsync(wait.Token);
            Assert.NotEqual(Silent, replica);
            vote = ReplicaOutputCodec.Decode(frame.Canonical.Memory).Items.FirstOrDefault(i => i.Sender == sender && i.SenderSeq == seq);
        }
        await EventuallyAsync(() => cluster.Gate.BatchesWithheld > 0, "the silent replica's gate was asked for the batch");
        await EventuallyAsync(() => cluster.Hosts[Silent].ReadModel.PendingFor(Receiver, 100)?.Items.Any(i => i.Sender == sender && i.SenderSeq == seq) == true,
            "the silent replica executed the message");

        // A fetch from the silent replica gets nothing back until the receiver gives up.
        var keys = cluster.Keys(PartyRole.Receiver, Receiver);
        var wanted = new[] { new BodyWanted(sender, vote.RouteSeq, vote.DataDigest) };
        using (var channel = GrpcChannel.ForAddress(cluster.ApiUrl(Silent), cluster.Pin(Silent)))
        using (var giveUp = new CancellationTokenSource(TimeSpan.FromSeconds(1)))
        {
            var request = BodyFetchCodec.EncodeRequest(Receiver, Silent, 1, wanted, keys.Ring(MacChannel.ReplicaReceiver, Silent)!);
            var answered = false;
            try
            {
                await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.FetchBodies, new BodyFetch { Canonical = ByteString.CopyFrom(request) },
                    BodyFetchReply.Parser, giveUp.Token);
                answered = true;
            }
            catch (Exception e) when (e is OperationCanceledException or GrpcCallException or IOException or HttpRequestException)
            {
                Assert.True(giveUp.IsCancellationRequested, $"the fetch should have been held, not failed: {e.Message}");
            }
            Assert.False(answered, "the silent replica answered a body fetch");
        }
        await EventuallyAsync(() => cluster.Gate.FetchesHeld == 1, "the silent replica's gate held the fetch");

        // The same fetch from the honest replica is answered with the body.
        using (var channel = GrpcChannel.ForAddress(cluster.ApiUrl(Honest), cluster.Pin(Honest)))
        {
            var ring = keys.Ring(MacChannel.ReplicaReceiver, Honest)!;
            var reply = await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.FetchBodies,
                new BodyFetch { Canonical = ByteString.CopyFrom(BodyFetchCodec.EncodeRequest(Receiver, Honest, 2, wanted, ring)) }, BodyFetchReply.Parser);
            Assert.Equal(data, Assert.Single(BodyFetchCodec.DecodeResponse(reply.Canonical.Memory).Items).Body.ToArray());
        }

        // Over all that time the silent replica streamed no frame, live or re-sent.
        Assert.Equal(0, cluster.Hosts[Silent].Metrics.LiveFrames + cluster.Hosts[Silent].Metrics.RetransmitFrames);
        while (frames.Reader.TryRead(out var late))
        {
            Assert.NotEqual(Silent, late.Item1);
        }
    }

    private Task<StreamReader<ReceiverSubscription, ReplicaOutputFrame>> SubscribeAsync(int replica, Channel<(int, ReplicaOutputFrame)> into) =>
        StreamReader<ReceiverSubscription, ReplicaOutputFrame>.OpenAsync(cluster.ApiUrl(replica), cluster.Pin(replica), replica, ProtocolNames.Subscribe,
            new ReceiverSubscription { Canonical = ByteString.CopyFrom(cluster.ReceiverSubscription(replica)) }, ReplicaOutputFrame.Parser, into);
}
