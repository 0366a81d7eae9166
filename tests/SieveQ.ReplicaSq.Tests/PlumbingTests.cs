using System.Security.Cryptography;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>The replica-SQ's own plumbing, without a cluster: frame splitting, the faulty renderer, item ages, stream bounds.</summary>
public sealed class PlumbingTests
{
    private static readonly MacKeyRing Ring = new(1, RandomNumberGenerator.GetBytes(MacKeyRing.KeyBytes));

    private static QueuedItem Item(int sender, long route, int size)
    {
        var data = RandomNumberGenerator.GetBytes(size);
        return new QueuedItem(sender, route, route, TaggedHash.DataDigest(data), data);
    }

    [Fact]
    public void A_batch_with_large_bodies_is_split_into_frames_under_the_budget_each_with_its_mac_and_the_agreed_batch_number()
    {
        var items = Enumerable.Range(1, 10).Select(i => Item(1, i, 300)).ToList();
        var batch = new OutboxBatch(100, BatchNo: 7, items);
        var frames = new OutputFrames(replica: 0, replicaCount: 4, maxBodyBytes: 1000);

        var split = frames.Retransmission(batch, Ring).ToList();

        Assert.Equal(4, split.Count);
        var decoded = split.Select(f => ReplicaOutputCodec.Decode(f)).ToList();
        Assert.All(split, f => Assert.True(ReplicaOutputCodec.VerifyMac(f, Ring)));
        Assert.All(decoded, d => Assert.Equal(7, d.BatchNo));
        Assert.All(decoded, d => Assert.True(d.Items.Sum(i => i.Body!.Value.Length) <= 1000));
        Assert.Equal(items.Select(i => i.RouteSeq), decoded.SelectMany(d => d.Items).Select(i => i.RouteSeq));

        // Digest-only frames stay whole: batch 7 for receiver 100 is designated to replica (7 + 100) % 4 = 3.
        var live = Assert.Single(frames.Live(batch, Ring));
        Assert.All(ReplicaOutputCodec.Decode(live).Items, i => Assert.Null(i.Body));
    }

    private sealed class ReversingBodies : IOutputBodyStage
    {
        public OutboxBatch Stream(OutboxBatch agreed) =>
            agreed with { Items = agreed.Items.Select(i => i with { Data = [.. i.Data.Reverse()] }).ToList() };
    }

    [Fact]
    public void An_output_body_stage_sees_what_is_streamed_with_bodies_and_the_agreed_digest_stays()
    {
        var item = Item(1, 1, 50);
        var frames = new OutputFrames(0, 4, 1 << 20, new ReversingBodies());
        var frame = Assert.Single(frames.Retransmission(new OutboxBatch(100, 0, [item]), Ring));
        var sent = Assert.Single(ReplicaOutputCodec.Decode(frame).Items);
        Assert.Equal(item.DataDigest, sent.DataDigest);
        Assert.Equal(item.Data.Reverse(), sent.Body!.Value.ToArray());
        Assert.True(ReplicaOutputCodec.VerifyMac(frame, Ring));
    }

    private sealed class SilentTowards(int receiver) : IReceiverOutputGate
    {
        public bool Sends(OutboxBatch agreed) => agreed.Receiver != receiver;

        public bool Answers(int r) => r != receiver;
    }

    [Fact]
    public void A_receiver_output_gate_withholds_every_frame_of_a_batch_live_or_resent_votes_and_bodies_alike()
    {
        var items = Enumerable.Range(1, 10).Select(i => Item(1, i, 300)).ToList();
        // Batch 7 for receiver 100 is designated to replica 3: live, replica 3 streams bodies, replica 0 digests only.
        var designated = new OutputFrames(3, 4, 1000, gate: new SilentTowards(100));
        var voter = new OutputFrames(0, 4, 1000, gate: new SilentTowards(100));
        Assert.Empty(designated.Live(new OutboxBatch(100, 7, items), Ring));
        Assert.Empty(voter.Live(new OutboxBatch(100, 7, items), Ring));
        Assert.Empty(designated.Retransmission(new OutboxBatch(100, 0, items), Ring));

        // Another receiver gets its frames as without a gate.
        Assert.Equal(4, designated.Live(new OutboxBatch(101, 6, items), Ring).Count());
        Assert.Single(voter.Live(new OutboxBatch(101, 6, items), Ring));
    }

    [Fact]
    public void Items_count_as_old_only_once_they_were_streamed_at_least_an_interval_ago()
    {
        var ages = new PendingAges(ageMs: 1000);
        var early = Item(1, 1, 1);
        var late = Item(1, 2, 1);
        var unseen = Item(2, 1, 1);
        ages.Tick(0);
        Assert.False(ages.IsOld(unseen));

        ages.Observe(new OutboxBatch(100, 1, [early]));
        ages.Tick(100);
        ages.Observe(new OutboxBatch(100, 2, [late]));
        ages.Tick(900);
        Assert.False(ages.IsOld(early));

        ages.Tick(1100);
        Assert.True(ages.IsOld(early));
        Assert.False(ages.IsOld(late));
        Assert.True(ages.IsOld(unseen));

        ages.Tick(1900);
        Assert.True(ages.IsOld(late));
    }

    [Fact]
    public void A_subscription_queue_refuses_frames_beyond_its_byte_bound()
    {
        using var stream = new ReceiverStream(100, maxFrames: 10, maxBytes: 1000);
        Assert.True(stream.TryEnqueue(new byte[600]));
        Assert.False(stream.HasRoomForResend);
        Assert.False(stream.TryEnqueue(new byte[600]));
        Assert.True(stream.TryEnqueue(new byte[400]));
        stream.End(StreamEnd.TooSlow);
        Assert.False(stream.TryEnqueue(new byte[1]));
        Assert.True(stream.Ended.IsCancellationRequested);
    }

    [Fact]
    public void A_subscriber_that_cannot_keep_up_with_live_batches_is_dropped_and_counted()
    {
        using var world = new LoneSieve();
        var streams = new ReceiverStreams(() => world.Sieve.ReadModel, world.Outputs, new OutputFrames(0, 4, 1 << 20), _ => Ring,
            new ReplicaSqHostOptions { SubscriptionQueueFrames = 2 }, world.Metrics, NullLogger.Instance);
        var stream = streams.Open(100);
        Assert.Equal(1, streams.LiveCount);

        for (var b = 1; b <= 3; b++)
        {
            streams.Publish(new OutboxBatch(100, b, [Item(1, b, 10)]));
        }

        Assert.Equal(StreamEnd.TooSlow, stream.EndReason);
        Assert.Equal(1, world.Metrics.Dropped(OutputDropReason.SlowSubscriber));
        Assert.Equal(0, streams.LiveCount);
        Assert.Equal(2, world.Metrics.LiveFrames);
    }

    [Fact]
    public void The_core_thread_never_waits_for_the_pump_a_full_output_queue_is_dropped_counted_and_marks_a_resync()
    {
        using var world = new LoneSieve(queueCapacity: 1);
        // Each WARNREQ from the only pre-SQ, 20 s of agreed time apart, makes the sieve ask the controller for another pre-SQ.
        for (var i = 0; i < 3; i++)
        {
            var warn = LoadWarningCodec.Encode(new LoadWarning(LoneSieve.PreSq, 990));
            var request = new ClientRequest(LoneSieve.PreSq, i + 1, OrderingRequestCodec.Encode(LoneSieve.PreSq, [warn]));
            var outcome = world.Sieve.Execute(new DecisionContext(i + 1, 1_000_000 + i * 20_000L), [request]);
            world.Outputs.Accept(i + 1, outcome.Outputs!);
        }

        Assert.Equal(1, world.Outputs.Reader.Count);
        Assert.Equal(2, world.Metrics.Dropped(OutputDropReason.OutboxQueueFull));
        Assert.Equal(2, world.Outputs.Discarded);
        Assert.True(world.Outputs.Reader.TryRead(out var first));
        Assert.Equal(ControllerAction.AddPreSq, Assert.Single(first.Notices).Action);
    }

    /// <summary>One sieve without a cluster: four replicas and one pre-SQ enrolled, nobody else.</summary>
    private sealed class LoneSieve : IDisposable
    {
        public const int PreSq = 10;
        private readonly PublicKeyDirectory _directory;

        public LoneSieve(int queueCapacity = 16)
        {
            using var agreement = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
            var spki = agreement.ExportSubjectPublicKeyInfo();
            var enrolment = new Enrolment(1, [], [], [new EnrolledPreSq(PreSq, "pre-sq", spki)],
                Enumerable.Range(0, 4).Select(i => new EnrolledReplica(i, $"replica-{i}", spki)).ToList());
            _directory = new PublicKeyDirectory(enrolment);
            Metrics = new ReplicaSqMetrics(0);
            Sieve = new SieveReplicaApplication(_directory, new ReplicaSieveOptions(), new RoutePolicy([]));
            Outputs = new ExecutionOutputQueue(queueCapacity, Metrics);
        }

        public ReplicaSqMetrics Metrics { get; }
        public SieveReplicaApplication Sieve { get; }
        public ExecutionOutputQueue Outputs { get; }

        public void Dispose()
        {
            Metrics.Dispose();
            _directory.Dispose();
        }
    }
}
