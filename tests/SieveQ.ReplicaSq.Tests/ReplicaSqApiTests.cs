using System.Security.Cryptography;
using System.Threading.Channels;
using Google.Protobuf;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Receiver;
using SieveQ.Sieve.Replica;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using static SieveQ.ReplicaSq.Tests.ReplicaSqCluster;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>
/// Four replica-SQs in this process, ordering for real over their TCP links, fed by an ordering client
/// acting as a pre-SQ, and observed over real gRPC as a post-SQ and a pre-SQ would. Each test uses its
/// own sender, so the shared cluster's queues do not couple them.
/// </summary>
public sealed class ReplicaSqApiTests : IClassFixture<ReplicaSqCluster>
{
    private readonly ReplicaSqCluster _c;

    public ReplicaSqApiTests(ReplicaSqCluster cluster) => _c = cluster;

    [Fact]
    public async Task A_subscribed_receiver_gets_each_approved_message_from_f_plus_1_replicas_and_the_post_sq_delivers_it()
    {
        const int sender = 1;
        var keys = _c.Keys(PartyRole.Receiver, Receiver);
        var frames = Channel.CreateUnbounded<(int, ReplicaOutputFrame)>();
        var readers = await SubscribeAllAsync(frames);
        try
        {
            var data = Enumerable.Range(0, 5).Select(i => RandomNumberGenerator.GetBytes(100 + i * 50)).ToList();
            var result = await _c.SubmitAsync(data.Select(d => _c.Message(sender, _c.NextSeq(sender), d)).ToArray());
            Assert.Equal(new ExecuteResult(5, 0, 0), result);

            var voter = new PostSqVoter(Receiver, _c.F, r => keys.Ring(MacChannel.ReplicaReceiver, r), new InMemoryDeliveryCursorStore());
            var delivered = new List<Delivery>();
            var votes = new Dictionary<long, HashSet<int>>();
            var liveFrom = new HashSet<int>();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(15));
            while (delivered.Count(d => d.Sender == sender) < data.Count)
            {
                var (replica, frame) = await frames.Reader.ReadAsync(timeout.Token);
                var bytes = frame.Canonical.Memory;
                Assert.True(ReplicaOutputCodec.VerifyMac(bytes.Span, keys.Ring(MacChannel.ReplicaReceiver, replica)!), $"MAC of replica {replica}");
                var output = ReplicaOutputCodec.Decode(bytes);
                Assert.Equal(replica, output.Replica);
                foreach (var item in output.Items.Where(i => i.Sender == sender))
                {
                    if (!votes.TryGetValue(item.RouteSeq, out var voters))
                    {
                        votes[item.RouteSeq] = voters = [];
                    }
                    voters.Add(replica);
                    if (output.BatchNo != 0)
                    {
                        liveFrom.Add(replica);
                    }
                }
                var step = voter.OnReplicaOutput(bytes, Environment.TickCount64);
                Assert.True(step.Accepted);
                delivered.AddRange(step.Deliveries);
            }
            var mine = delivered.Where(d => d.Sender == sender).ToList();
            Assert.Equal(data, mine.Select(d => d.Data.ToArray()));
            Assert.Equal([1L, 2, 3, 4, 5], mine.Select(d => d.SenderSeq));
            Assert.All(mine, d => Assert.True(votes[d.RouteSeq].Count >= _c.F + 1, $"route {d.RouteSeq}: {votes[d.RouteSeq].Count} votes"));
            Assert.True(liveFrom.Count >= _c.F + 1, "live batches (not only retransmissions) reached the receiver");

            // The receiver's acknowledgement, ordered like any other item, trims every replica's queue.
            voter.CommitDelivered();
            Assert.Equal(1, (await _c.SubmitAsync(voter.BuildAcknowledgement(keys.Signing!))).Accepted);
            await EventuallyAsync(() => _c.Hosts.All(h => h.ReadModel.PendingFor(Receiver, 100_000)?.Items.All(i => i.Sender != sender) ?? true),
                "every replica dropped the acknowledged items");
        }
        finally
        {
            foreach (var r in readers)
            {
                await r.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task Subscriptions_with_a_bad_signature_another_addressee_a_stale_time_or_the_wrong_key_are_refused()
    {
        var url = _c.ApiUrl(0);
        var refusedBefore = _c.Hosts[0].Metrics.RefusedSubscriptions;
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        using var stranger = ECDsa.Create(ECCurve.NamedCurves.nistP256);

        var forged = SubscriptionCodec.Encode(StructureKind.ReceiverSubscription, Receiver, 0, now, stranger);
        Assert.Equal(GrpcStatusCode.PermissionDenied, await RefusedReceiverAsync(url, _c.Pin(0), forged));
        Assert.Equal(GrpcStatusCode.PermissionDenied, await RefusedReceiverAsync(url, _c.Pin(0), _c.ReceiverSubscription(replica: 1)));
        Assert.Equal(GrpcStatusCode.PermissionDenied, await RefusedReceiverAsync(url, _c.Pin(0), _c.ReceiverSubscription(0, now - (long)TimeSpan.FromMinutes(10).TotalMilliseconds)));
        Assert.Equal(GrpcStatusCode.InvalidArgument, await RefusedReceiverAsync(url, _c.Pin(0), [0x30, 1, 2, 3]));

        // A pre-SQ subscription must carry that pre-SQ's own ordering-client signature.
        using var otherPreSq = ClusterBootstrap.LoadKey(_c.Context.Cluster, _c.Context.Config.PreSqs[1].Id);
        var impostor = SubscriptionCodec.Encode(StructureKind.PreSqSubscription, _c.PreSq, 0, now, otherPreSq.Key);
        var status = await StreamReader<PreSqSubscription, AckResponseFrame>.RefusalAsync(url, _c.Pin(0), ProtocolNames.AckResponses,
            new PreSqSubscription { Canonical = ByteString.CopyFrom(impostor) }, AckResponseFrame.Parser);
        Assert.Equal(GrpcStatusCode.PermissionDenied, status);

        Assert.Equal(refusedBefore + 5, _c.Hosts[0].Metrics.RefusedSubscriptions);
    }

    /// <summary>
    /// A message of the largest DATA a sender may send is ordered like any other and judged by the rules (this
    /// deployment's routes allow 64 KiB, so it is dropped there, deterministically), and the next one passes. Its
    /// ordering request was above the ordering layer's 1 MiB payload bound: the replicas refused the frame, the
    /// pre-SQ retried it for ever and one such message took the sieve's delivery to zero (issue 16, item 3).
    /// </summary>
    [Fact]
    public async Task A_message_of_the_largest_data_is_ordered_and_judged_and_the_sieve_goes_on()
    {
        const int sender = 3;
        var data = RandomNumberGenerator.GetBytes(SieveQ.Sieve.Envelope.EnvelopeLimits.MaxDataBytes);
        var result = await _c.SubmitAsync(_c.Message(sender, _c.NextSeq(sender), data));
        Assert.Equal(new ExecuteResult(0, 0, 1), result);
        Assert.Equal(new ExecuteResult(1, 0, 0), await _c.SubmitAsync(_c.Message(sender, _c.NextSeq(sender), [1, 2, 3])));
    }

    [Fact]
    public async Task Enrolment_answers_with_the_parties_keys_and_refuses_a_lookup_that_names_no_party()
    {
        using var channel = GrpcChannel.ForAddress(_c.ApiUrl(1), _c.Pin(1));
        var sender = await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.Enrolment,
            new EnrolmentLookup { Party = EnrolmentParty.Sender, Id = 1 }, EnrolmentStanding.Parser);
        var enrolled = _c.Context.Enrolment.Senders.Single(s => s.Id == 1);
        Assert.Equal(EnrolmentState.Enrolled, sender.State);
        Assert.Equal(enrolled.SignaturePublicKey, sender.SignaturePublicKey.ToByteArray());
        Assert.Equal(enrolled.AgreementPublicKey, sender.AgreementPublicKey.ToByteArray());
        Assert.False(sender.ThroughOrdering);
        // The replicas run fixed routes: a sender's answer carries its routes as agreed now.
        Assert.True(sender.RoutesFixed);
        Assert.Equal(_c.Context.Config.Routes.Where(r => r.Sender == 1).Select(r => (r.Receiver, r.MaxBytes)).Order(),
            sender.Routes.Select(r => (r.Receiver, r.MaxBytes)).Order());
        Assert.NotEmpty(sender.Routes);

        var receiver = await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.Enrolment,
            new EnrolmentLookup { Party = EnrolmentParty.Receiver, Id = Receiver }, EnrolmentStanding.Parser);
        Assert.Equal(EnrolmentState.Enrolled, receiver.State);
        Assert.Equal(_c.Context.Enrolment.Receivers.Single(r => r.Id == Receiver).SignaturePublicKey, receiver.SignaturePublicKey.ToByteArray());
        Assert.False(receiver.RoutesFixed);

        // A receiver's id is no sender's, and an unknown id is nobody's.
        var notASender = await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.Enrolment,
            new EnrolmentLookup { Party = EnrolmentParty.Sender, Id = Receiver }, EnrolmentStanding.Parser);
        Assert.Equal(EnrolmentState.NotEnrolled, notASender.State);
        Assert.True(notASender.SignaturePublicKey.IsEmpty);

        foreach (var bad in new[] { new EnrolmentLookup { Id = 1 }, new EnrolmentLookup { Party = EnrolmentParty.Sender, Id = -1 } })
        {
            var e = await Assert.ThrowsAsync<GrpcCallException>(() => channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.Enrolment, bad, EnrolmentStanding.Parser));
            Assert.Equal(GrpcStatusCode.InvalidArgument, e.Status);
            Assert.Contains("names a sender or a receiver", e.Message, StringComparison.Ordinal);
        }
        Assert.True(_c.Hosts[1].Metrics.EnrolmentLookups >= 3);
    }

    [Fact]
    public async Task FetchBodies_answers_for_a_queued_item_and_not_for_a_request_with_a_wrong_mac()
    {
        const int sender = 2;
        var keys = _c.Keys(PartyRole.Receiver, Receiver);
        var data = RandomNumberGenerator.GetBytes(700);
        var seq = _c.NextSeq(sender);
        Assert.Equal(1, (await _c.SubmitAsync(_c.Message(sender, seq, data))).Accepted);
        var host = _c.Hosts[0];
        QueuedItem? item = null;
        await EventuallyAsync(() => (item = host.ReadModel.PendingFor(Receiver, 100_000)?.Items.FirstOrDefault(i => i.Sender == sender && i.SenderSeq == seq)) is not null,
            "replica 0 queued the message");

        using var channel = GrpcChannel.ForAddress(_c.ApiUrl(0), _c.Pin(0));
        var ring = keys.Ring(MacChannel.ReplicaReceiver, 0)!;
        var wanted = new[] { new BodyWanted(sender, item!.RouteSeq, item.DataDigest) };
        var reply = await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.FetchBodies,
            new BodyFetch { Canonical = ByteString.CopyFrom(BodyFetchCodec.EncodeRequest(Receiver, 0, 7, wanted, ring)) }, BodyFetchReply.Parser);
        Assert.True(BodyFetchCodec.VerifyResponseMac(reply.Canonical.Span, ring));
        var answer = BodyFetchCodec.DecodeResponse(reply.Canonical.Memory);
        Assert.Equal((0, Receiver, 7L), (answer.Replica, answer.Receiver, answer.Nonce));
        var body = Assert.Single(answer.Items);
        Assert.Equal((sender, item.RouteSeq, seq), (body.Sender, body.RouteSeq, body.SenderSeq));
        Assert.Equal(data, body.Body.ToArray());

        var wrongKey = BodyFetchCodec.EncodeRequest(Receiver, 0, 8, wanted, keys.Ring(MacChannel.ReplicaReceiver, 1)!);
        var refused = await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.FetchBodies,
            new BodyFetch { Canonical = ByteString.CopyFrom(wrongKey) }, BodyFetchReply.Parser);
        Assert.True(refused.Canonical.IsEmpty);
    }

    [Fact]
    public async Task A_pre_sq_subscription_receives_the_ackres_of_an_ackreq_it_forwarded()
    {
        const int sender = 4;
        var before = _c.Hosts.Select(h => h.Metrics.PreSqSubscriptions).ToArray();
        var acks = Channel.CreateUnbounded<(int, AckResponseFrame)>();
        var readers = new List<StreamReader<PreSqSubscription, AckResponseFrame>>();
        foreach (var h in _c.Hosts)
        {
            readers.Add(await StreamReader<PreSqSubscription, AckResponseFrame>.OpenAsync(_c.ApiUrl(h.Id), _c.Pin(h.Id), h.Id, ProtocolNames.AckResponses,
                new PreSqSubscription { Canonical = ByteString.CopyFrom(_c.PreSqSubscription(h.Id)) }, AckResponseFrame.Parser, acks));
        }
        try
        {
            await EventuallyAsync(() => _c.Hosts.Select((h, i) => h.Metrics.PreSqSubscriptions > before[i]).All(x => x), "every replica took the pre-SQ subscription");
            var seq = _c.NextSeq(sender);
            Assert.Equal(1, (await _c.SubmitAsync(_c.Message(sender, seq, [1, 2, 3]))).Accepted);
            const long nonce = 1 << 20;
            var senderKeys = _c.Keys(PartyRole.Sender, sender);
            Assert.Equal(1, (await _c.SubmitAsync(AckRequestCodec.Encode(sender, seq, seq + 1, nonce, senderKeys.Signing!))).Accepted);

            var from = new HashSet<int>();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(15));
            while (from.Count < _c.Hosts.Count)
            {
                var (replica, frame) = await acks.Reader.ReadAsync(timeout.Token);
                Assert.Equal(sender, frame.Sender);
                Assert.True(AckResponseCodec.VerifyMac(frame.Canonical.Span, senderKeys.Ring(MacChannel.ReplicaSender, replica)!), $"MAC of replica {replica}");
                var r = AckResponseCodec.Decode(frame.Canonical.Span);
                Assert.Equal((replica, sender, nonce, seq, _c.PreSq), (r.Replica, r.Sender, r.Nonce, r.DeliveredUpTo, r.AssignedPreSq));
                from.Add(replica);
            }
            // Each replica published the assignment it answered with before the answer left it.
            foreach (var h in _c.Hosts)
            {
                var counters = h.Health().Counters;
                Assert.Equal((_c.PreSq, 0L), (counters[$"assigned.sender.{sender}"], counters[$"last_loss_ppm.sender.{sender}"]));
            }
        }
        finally
        {
            foreach (var r in readers)
            {
                await r.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task An_unacknowledged_item_is_sent_again_with_its_body_after_the_retransmission_interval()
    {
        const int sender = 3;
        const int replica = 2;
        var frames = Channel.CreateUnbounded<(int, ReplicaOutputFrame)>();
        var host = _c.Hosts[replica];
        var before = host.Metrics.ReceiverSubscriptions;
        await using var reader = await StreamReader<ReceiverSubscription, ReplicaOutputFrame>.OpenAsync(_c.ApiUrl(replica), _c.Pin(replica), replica, ProtocolNames.Subscribe,
            new ReceiverSubscription { Canonical = ByteString.CopyFrom(_c.ReceiverSubscription(replica)) }, ReplicaOutputFrame.Parser, frames);
        await EventuallyAsync(() => host.Metrics.ReceiverSubscriptions > before, "the replica took the subscription");

        var data = RandomNumberGenerator.GetBytes(300);
        var seq = _c.NextSeq(sender);
        Assert.Equal(1, (await _c.SubmitAsync(_c.Message(sender, seq, data))).Accepted);
        long? route = null;
        var liveAt = 0L;
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(15));
        while (true)
        {
            var (_, frame) = await frames.Reader.ReadAsync(timeout.Token);
            var output = ReplicaOutputCodec.Decode(frame.Canonical.Memory);
            var item = output.Items.FirstOrDefault(i => i.Sender == sender && i.SenderSeq == seq);
            if (item is null)
            {
                continue;
            }
            if (output.BatchNo != 0 && route is null)
            {
                route = item.RouteSeq;
                liveAt = Environment.TickCount64;
            }
            else if (output.BatchNo == 0 && route == item.RouteSeq)
            {
                Assert.Equal(data, item.Body?.ToArray());
                Assert.True(Environment.TickCount64 - liveAt >= 300, "re-sent only once it was old");
                break;
            }
        }
        Assert.True(host.Metrics.RetransmitFrames > 0);
    }

    [Fact]
    public async Task A_newer_subscription_of_the_same_receiver_ends_the_older_stream()
    {
        const int replica = 3;
        var host = _c.Hosts[replica];
        var opened = host.Metrics.ReceiverSubscriptions;
        var replaced = host.Metrics.ReplacedSubscriptions;
        await using var older = await StreamReader<ReceiverSubscription, ReplicaOutputFrame>.OpenAsync(_c.ApiUrl(replica), _c.Pin(replica), replica, ProtocolNames.Subscribe,
            new ReceiverSubscription { Canonical = ByteString.CopyFrom(_c.ReceiverSubscription(replica)) }, ReplicaOutputFrame.Parser);
        await EventuallyAsync(() => host.Metrics.ReceiverSubscriptions > opened, "the first subscription is live");
        await using var newer = await StreamReader<ReceiverSubscription, ReplicaOutputFrame>.OpenAsync(_c.ApiUrl(replica), _c.Pin(replica), replica, ProtocolNames.Subscribe,
            new ReceiverSubscription { Canonical = ByteString.CopyFrom(_c.ReceiverSubscription(replica)) }, ReplicaOutputFrame.Parser);

        var ended = await Task.WhenAny(older.Reading, Task.Delay(TimeSpan.FromSeconds(10)));
        Assert.Same(older.Reading, ended);
        Assert.Equal(replaced + 1, host.Metrics.ReplacedSubscriptions);
        Assert.False(newer.Reading.IsCompleted);
    }

    /// <summary>
    /// Issue 16, item 6: a recorded subscription replayed within the freshness window used to replace the live
    /// stream. The replay (and any older one) is refused now, and the live stream goes on.
    /// </summary>
    [Fact]
    public async Task A_replayed_subscription_is_refused_and_leaves_the_live_stream_alone()
    {
        const int replica = 2;
        var host = _c.Hosts[replica];
        var recorded = _c.ReceiverSubscription(replica);
        var opened = host.Metrics.ReceiverSubscriptions;
        await using (var first = await StreamReader<ReceiverSubscription, ReplicaOutputFrame>.OpenAsync(_c.ApiUrl(replica), _c.Pin(replica), replica, ProtocolNames.Subscribe,
            new ReceiverSubscription { Canonical = ByteString.CopyFrom(recorded) }, ReplicaOutputFrame.Parser))
        {
            await EventuallyAsync(() => host.Metrics.ReceiverSubscriptions > opened, "the recorded subscription was accepted once");
        }
        await using var live = await StreamReader<ReceiverSubscription, ReplicaOutputFrame>.OpenAsync(_c.ApiUrl(replica), _c.Pin(replica), replica, ProtocolNames.Subscribe,
            new ReceiverSubscription { Canonical = ByteString.CopyFrom(_c.ReceiverSubscription(replica)) }, ReplicaOutputFrame.Parser);
        await EventuallyAsync(() => host.Metrics.ReceiverSubscriptions > opened + 1, "the live subscription is open");

        var replays = host.Metrics.ReplayedSubscriptions;
        var replaced = host.Metrics.ReplacedSubscriptions;
        await using var replay = await StreamReader<ReceiverSubscription, ReplicaOutputFrame>.OpenAsync(_c.ApiUrl(replica), _c.Pin(replica), replica, ProtocolNames.Subscribe,
            new ReceiverSubscription { Canonical = ByteString.CopyFrom(recorded) }, ReplicaOutputFrame.Parser);
        await EventuallyAsync(() => host.Metrics.ReplayedSubscriptions > replays, "the replay is refused");
        Assert.Equal(replaced, host.Metrics.ReplacedSubscriptions);
        Assert.False(live.Reading.IsCompleted);
    }

    [Fact]
    public async Task Health_reports_a_healthy_replica_sq_with_its_counters()
    {
        var entry = _c.Context.Config.Replica(1);
        var deadline = Environment.TickCount64 + 10_000;
        ComponentHealth health;
        while (!(health = await DeploymentHealth.ProbeAsync("replica-sq", entry.Name, entry.ApiUrl, ProtocolNames.ReplicaSqService, TimeSpan.FromSeconds(5), pin: entry.Pin())).Healthy)
        {
            Assert.True(Environment.TickCount64 < deadline, $"replica 1 not healthy: {health.Detail}");
            await Task.Delay(100);
        }
        Assert.True(health.Reachable);
        foreach (var counter in new[] { "decided", "executed", $"queue.{Receiver}", "output_drop.SlowSubscriber", "controller_notice.RemovePreSq", "subscriptions.receiver.live" })
        {
            Assert.True(health.Counters.ContainsKey(counter), counter);
        }
    }

    private async Task<List<StreamReader<ReceiverSubscription, ReplicaOutputFrame>>> SubscribeAllAsync(Channel<(int, ReplicaOutputFrame)> into)
    {
        var before = _c.Hosts.Select(h => h.Metrics.ReceiverSubscriptions).ToArray();
        var readers = new List<StreamReader<ReceiverSubscription, ReplicaOutputFrame>>();
        foreach (var h in _c.Hosts)
        {
            readers.Add(await StreamReader<ReceiverSubscription, ReplicaOutputFrame>.OpenAsync(_c.ApiUrl(h.Id), _c.Pin(h.Id), h.Id, ProtocolNames.Subscribe,
                new ReceiverSubscription { Canonical = ByteString.CopyFrom(_c.ReceiverSubscription(h.Id)) }, ReplicaOutputFrame.Parser, into));
        }
        await EventuallyAsync(() => _c.Hosts.Select((h, i) => h.Metrics.ReceiverSubscriptions > before[i]).All(x => x), "every replica took the subscription");
        return readers;
    }

    private static Task<GrpcStatusCode> RefusedReceiverAsync(Uri url, SieveQ.Transport.Tls.TlsPin? pin, byte[] subscription) =>
        StreamReader<ReceiverSubscription, ReplicaOutputFrame>.RefusalAsync(url, pin, ProtocolNames.Subscribe,
            new ReceiverSubscription { Canonical = ByteString.CopyFrom(subscription) }, ReplicaOutputFrame.Parser);
}
