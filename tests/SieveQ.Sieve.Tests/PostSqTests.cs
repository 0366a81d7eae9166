using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Hosting.Storage;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Receiver;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>Algorithm 1 on digests, against correct replicas and up to f lying ones.</summary>
public sealed class PostSqTests
{
    private const int Receiver = 100;

    private enum Lie { WrongDigest, WrongBody, Equivocate, Silent, WithholdBodies, GarbageFetch, Replay }

    private sealed class Cluster
    {
        public required int F { get; init; }
        public int N => 3 * F + 1;
        public required MacKeyRing[] Rings { get; init; }
        public required Dictionary<int, Lie> Liars { get; init; }

        public static Cluster Create(int f, Dictionary<int, Lie> liars)
        {
            var rings = Enumerable.Range(0, 3 * f + 1).Select(_ => new MacKeyRing(1, RandomNumberGenerator.GetBytes(32))).ToArray();
            return new Cluster { F = f, Rings = rings, Liars = liars };
        }
    }

    /// <summary>The agreed batches: each sender's route numbers 1..count, split into batches of random size.</summary>
    private static List<OutboxBatch> AgreedBatches(Random rng, int senders, int count, out Dictionary<(int, long), byte[]> truth)
    {
        truth = [];
        var items = new List<QueuedItem>();
        for (var s = 1; s <= senders; s++)
        {
            for (long r = 1; r <= count; r++)
            {
                var data = new byte[rng.Next(0, 40)];
                rng.NextBytes(data);
                truth[(s, r)] = data;
                items.Add(new QueuedItem(s, r * 3, r, TaggedHash.DataDigest(data), data));
            }
        }
        // Interleave senders as the total order would, keeping each sender's own order.
        var ordered = items.OrderBy(i => i.RouteSeq * 1000 + rng.Next(1000)).ToList();
        var batches = new List<OutboxBatch>();
        long batchNo = 1;
        for (var at = 0; at < ordered.Count;)
        {
            var n = Math.Min(rng.Next(1, 8), ordered.Count - at);
            batches.Add(new OutboxBatch(Receiver, batchNo++, ordered.GetRange(at, n)));
            at += n;
        }
        return batches;
    }

    private static IEnumerable<byte[]> Render(Cluster c, int replica, OutboxBatch batch, Random rng)
    {
        var designated = ReplicaOutputRenderer.IsDesignated(batch.BatchNo, Receiver, replica, c.N);
        if (!c.Liars.TryGetValue(replica, out var lie))
        {
            yield return ReplicaOutputRenderer.Render(batch, replica, c.N, c.Rings[replica]);
            yield break;
        }
        switch (lie)
        {
            case Lie.Silent:
                yield break;
            case Lie.WithholdBodies:
                yield return ReplicaOutputRenderer.Render(batch, replica, withBodies: false, c.Rings[replica]);
                yield break;
            case Lie.WrongDigest:
            {
                var fake = batch.Items.Select(i =>
                {
                    var d = i.Data.Append((byte)7).ToArray();
                    return new OutputItem(i.Sender, i.SenderSeq, i.RouteSeq, TaggedHash.DataDigest(d), designated ? d : null);
                }).ToList();
                yield return ReplicaOutputCodec.Encode(replica, Receiver, batch.BatchNo, fake, c.Rings[replica]);
                yield break;
            }
            case Lie.WrongBody:
            {
                var fake = batch.Items.Select(i => new OutputItem(i.Sender, i.SenderSeq, i.RouteSeq, i.DataDigest, (ReadOnlyMemory<byte>?)i.Data.Append((byte)1).ToArray())).ToList();
                yield return ReplicaOutputCodec.Encode(replica, Receiver, batch.BatchNo, fake, c.Rings[replica]);
                yield break;
            }
            case Lie.Equivocate:
            {
                // A wrong vote first, then the right one, both MACed: only the first counts.
                var wrong = batch.Items.Select(i => new OutputItem(i.Sender, i.SenderSeq + 1, i.RouteSeq, i.DataDigest, null)).ToList();
                yield return ReplicaOutputCodec.Encode(replica, Receiver, batch.BatchNo, wrong, c.Rings[replica]);
                yield return ReplicaOutputRenderer.Render(batch, replica, c.N, c.Rings[replica]);
                yield break;
            }
            case Lie.Replay:
            {
                var honest = ReplicaOutputRenderer.Render(batch, replica, c.N, c.Rings[replica]);
                yield return honest;
                yield return honest;
                var badMac = honest.ToArray();
                badMac[^1] ^= 1;
                yield return badMac;
                // Votes forged in another replica's name, MACed with the liar's key, fail the MAC.
                var spoof = ReplicaOutputRenderer.Render(batch, (replica + 1) % c.N, withBodies: true, c.Rings[replica]);
                yield return spoof;
                yield break;
            }
            default:
                yield return ReplicaOutputRenderer.Render(batch, replica, c.N, c.Rings[replica]);
                yield break;
        }
    }

    private static byte[]? AnswerFetch(Cluster c, FetchOrder order, Dictionary<(int, long), byte[]> truth)
    {
        var req = BodyFetchCodec.DecodeRequest(order.Request);
        Assert.True(BodyFetchCodec.VerifyRequestMac(order.Request, c.Rings[order.Replica]));
        if (c.Liars.TryGetValue(order.Replica, out var lie))
        {
            if (lie == Lie.Silent)
            {
                return null;
            }
            var junk = req.Items.Select(w => new FetchedBody(w.Sender, w.RouteSeq, 1, new byte[] { 1, 2, 3 })).ToList();
            return BodyFetchCodec.EncodeResponse(order.Replica, Receiver, req.Nonce, junk, c.Rings[order.Replica]);
        }
        var bodies = req.Items.Where(w => truth.ContainsKey((w.Sender, w.RouteSeq)))
            .Select(w => new FetchedBody(w.Sender, w.RouteSeq, w.RouteSeq * 3, truth[(w.Sender, w.RouteSeq)])).ToList();
        return BodyFetchCodec.EncodeResponse(order.Replica, Receiver, req.Nonce, bodies, c.Rings[order.Replica]);
    }

    /// <summary>Runs one scenario; returns deliveries per sender.</summary>
    private static Dictionary<int, List<Delivery>> Play(Cluster c, List<OutboxBatch> batches, Dictionary<(int, long), byte[]> truth, Random rng, PostSqVoter voter)
    {
        var inputs = new List<byte[]>();
        for (var r = 0; r < c.N; r++)
        {
            foreach (var b in batches)
            {
                inputs.AddRange(Render(c, r, b, rng));
            }
        }
        // Arbitrary interleaving (and reordering within one replica's stream).
        var shuffled = inputs.OrderBy(_ => rng.Next()).ToList();
        var got = new Dictionary<int, List<Delivery>>();
        long now = 0;
        var fetches = new Queue<FetchOrder>();
        void Take(PostSqStep step)
        {
            foreach (var d in step.Deliveries)
            {
                if (!got.TryGetValue(d.Sender, out var l))
                {
                    got[d.Sender] = l = [];
                }
                l.Add(d with { Data = d.Data.ToArray() });
            }
            foreach (var f in step.Fetches)
            {
                fetches.Enqueue(f);
            }
        }
        foreach (var input in shuffled)
        {
            now += rng.Next(0, 3);
            Take(voter.OnReplicaOutput(input, now));
        }
        for (var round = 0; round < 40; round++)
        {
            now += 300;
            foreach (var f in voter.Tick(now))
            {
                fetches.Enqueue(f);
            }
            while (fetches.TryDequeue(out var f))
            {
                if (AnswerFetch(c, f, truth) is { } answer)
                {
                    Take(voter.OnBodyFetchResponse(answer, now));
                }
            }
        }
        return got;
    }

    private static void AssertExactly(Dictionary<int, List<Delivery>> got, Dictionary<(int, long), byte[]> truth, int senders, int count)
    {
        for (var s = 1; s <= senders; s++)
        {
            Assert.True(got.ContainsKey(s), $"nothing delivered from sender {s}");
            var list = got[s];
            Assert.Equal(Enumerable.Range(1, count).Select(i => (long)i), list.Select(d => d.RouteSeq));
            foreach (var d in list)
            {
                Assert.Equal(truth[(s, d.RouteSeq)], d.Data.ToArray());
                Assert.Equal(d.RouteSeq * 3, d.SenderSeq);
            }
        }
    }

    [Theory]
    [InlineData(1, 150)]
    [InlineData(2, 40)]
    public void Random_interleavings_with_up_to_f_liars_deliver_exactly_the_correct_sequence(int f, int runs)
    {
        var lies = Enum.GetValues<Lie>();
        for (var run = 0; run < runs; run++)
        {
            var rng = new Random(1000 * f + run);
            var liars = new Dictionary<int, Lie>();
            var liarCount = rng.Next(0, f + 1);
            while (liars.Count < liarCount)
            {
                liars[rng.Next(3 * f + 1)] = lies[rng.Next(lies.Length)];
            }
            var c = Cluster.Create(f, liars);
            var batches = AgreedBatches(rng, senders: 2, count: 30, out var truth);
            var voter = new PostSqVoter(Receiver, f, r => c.Rings[r], new InMemoryDeliveryCursorStore());
            var got = Play(c, batches, truth, rng, voter);
            AssertExactly(got, truth, 2, 30);
        }
    }

    [Fact]
    public void A_lying_designated_replica_forces_a_body_fetch_from_another_voter()
    {
        var rng = new Random(5);
        var batches = AgreedBatches(rng, 1, 10, out var truth);
        // Make every batch designate replica 2, which withholds bodies.
        batches = batches.Select((b, i) => b with { BatchNo = 2 - Receiver % 4 + 4 * (i + 1) }).ToList();
        var c = Cluster.Create(1, new Dictionary<int, Lie> { [2] = Lie.WithholdBodies });
        var voter = new PostSqVoter(Receiver, 1, r => c.Rings[r], new InMemoryDeliveryCursorStore());
        var fetchesSeen = 0;
        var delivered = new List<Delivery>();
        long now = 0;
        foreach (var b in batches)
        {
            for (var r = 0; r < 4; r++)
            {
                foreach (var bytes in Render(c, r, b, rng))
                {
                    delivered.AddRange(voter.OnReplicaOutput(bytes, now).Deliveries);
                }
            }
        }
        Assert.Empty(delivered);
        now += 100;
        foreach (var order in voter.Tick(now))
        {
            fetchesSeen++;
            Assert.NotEqual(2, order.Replica);
            delivered.AddRange(voter.OnBodyFetchResponse(AnswerFetch(c, order, truth)!, now).Deliveries);
        }
        Assert.True(fetchesSeen >= 1);
        Assert.Equal(Enumerable.Range(1, 10).Select(i => (long)i), delivered.Select(d => d.RouteSeq));
    }

    /// <summary>
    /// The byzantine-replica attack's receiver waited out the fetch grace (50 ms) for each body the liar had already
    /// sent wrong, behind which every later message of that sender waited (p50 26 to 66 ms, docs/attacks.md). A wrong
    /// body leaves nothing in flight to wait for: the fetch goes out at once, and not to the replica that lied.
    /// </summary>
    [Fact]
    public void A_designated_replicas_wrong_body_is_fetched_from_another_voter_at_once()
    {
        var rng = new Random(7);
        var batches = AgreedBatches(rng, 1, 10, out var truth);
        batches = batches.Select((b, i) => b with { BatchNo = 2 - Receiver % 4 + 4 * (i + 1) }).ToList();
        var c = Cluster.Create(1, new Dictionary<int, Lie> { [2] = Lie.WrongBody });
        var voter = new PostSqVoter(Receiver, 1, r => c.Rings[r], new InMemoryDeliveryCursorStore());
        var delivered = new List<Delivery>();
        var fetches = new List<FetchOrder>();
        const long now = 1_000;
        foreach (var b in batches)
        {
            foreach (var r in new[] { 2, 0, 1, 3 })
            {
                foreach (var bytes in Render(c, r, b, rng))
                {
                    var step = voter.OnReplicaOutput(bytes, now);
                    delivered.AddRange(step.Deliveries);
                    fetches.AddRange(step.Fetches);
                }
            }
        }
        fetches.AddRange(voter.Tick(now));
        Assert.NotEmpty(fetches);
        Assert.DoesNotContain(fetches, f => f.Replica == 2);
        foreach (var order in fetches)
        {
            delivered.AddRange(voter.OnBodyFetchResponse(AnswerFetch(c, order, truth)!, now).Deliveries);
        }
        Assert.Equal(Enumerable.Range(1, 10).Select(i => (long)i), delivered.Select(d => d.RouteSeq));
        Assert.Equal(Enumerable.Range(1, 10).Select(i => truth[(1, i)]), delivered.Select(d => d.Data.ToArray()));
    }

    /// <summary>
    /// Under the withholding-replica attack every slot the silent replica was designated for waited out the fetch
    /// grace, and its sender's later messages behind it (p50 21 to 62 ms, docs/attacks.md). A designated replica that
    /// missed its last slots and sent nothing since is fetched around at once; anything it sends makes it waited for.
    /// </summary>
    [Fact]
    public void A_designated_replica_that_went_silent_is_not_waited_for_until_it_speaks_again()
    {
        var rng = new Random(9);
        var batches = AgreedBatches(rng, 1, 60, out var truth);
        batches = batches.Select((b, i) => b with { BatchNo = 2 - Receiver % 4 + 4 * (i + 1) }).ToList();
        var c = Cluster.Create(1, new Dictionary<int, Lie> { [2] = Lie.Silent });
        var voter = new PostSqVoter(Receiver, 1, r => c.Rings[r], new InMemoryDeliveryCursorStore());
        var delivered = new List<Delivery>();
        long now = 1_000;
        var next = 0;

        // One agreed batch from the replicas (replica 2 too when it speaks); the fetches it called for at once.
        List<FetchOrder> Feed(bool silentSpeaks)
        {
            var b = batches[next++];
            var fetches = new List<FetchOrder>();
            // When it speaks, it speaks first (a batch whose quorum forms before its return is still fetched at once).
            foreach (var r in silentSpeaks ? new[] { 2, 0, 1, 3 } : [0, 1, 2, 3])
            {
                var frames = r == 2 && silentSpeaks ? [ReplicaOutputRenderer.Render(b, 2, c.N, c.Rings[2])] : Render(c, r, b, rng);
                foreach (var bytes in frames)
                {
                    var step = voter.OnReplicaOutput(bytes, now);
                    delivered.AddRange(step.Deliveries);
                    fetches.AddRange(step.Fetches);
                }
            }
            return fetches;
        }
        void Settle(IEnumerable<FetchOrder> orders)
        {
            now += 100;
            foreach (var order in orders.Concat(voter.Tick(now)))
            {
                Assert.NotEqual(2, order.Replica);
                delivered.AddRange(voter.OnBodyFetchResponse(AnswerFetch(c, order, truth)!, now).Deliveries);
            }
        }

        // Not yet known silent: the grace is given.
        Assert.Empty(Feed(silentSpeaks: false));
        Settle([]);
        while (delivered.Count < new PostSqOptions().SilentAfterMissedSlots)
        {
            Settle(Feed(silentSpeaks: false));
        }
        // Known silent: fetched at once, never from it.
        var atOnce = Feed(silentSpeaks: false);
        Assert.NotEmpty(atOnce);
        Settle(atOnce);
        // It speaks (its body comes with its vote), and is waited for again.
        Assert.Empty(Feed(silentSpeaks: true));
        Assert.Empty(Feed(silentSpeaks: false));
        Settle([]);

        Assert.Equal(Enumerable.Range(1, delivered.Count).Select(i => (long)i), delivered.Select(d => d.RouteSeq));
        Assert.Equal(delivered.Select(d => truth[(1, d.RouteSeq)]), delivered.Select(d => d.Data.ToArray()));
        Assert.Equal(batches.Take(next).Sum(b => b.Items.Count), delivered.Count);
    }

    [Fact]
    public void Exactly_once_across_a_receiver_restart()
    {
        var dir = Path.Combine(Path.GetTempPath(), "sieveq-post-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        try
        {
            var rng = new Random(11);
            var c = Cluster.Create(1, []);
            var batches = AgreedBatches(rng, 2, 20, out var truth);
            var path = Path.Combine(dir, "cursors");
            var first = new PostSqVoter(Receiver, 1, r => c.Rings[r], new FileDeliveryCursorStore(path));
            var delivered = new List<Delivery>();
            foreach (var b in batches.Take(batches.Count / 2))
            {
                for (var r = 0; r < 4; r++)
                {
                    delivered.AddRange(first.OnReplicaOutput(ReplicaOutputRenderer.Render(b, r, 4, c.Rings[r]), 0).Deliveries);
                }
            }
            first.CommitDelivered();
            var committed = delivered.Count;
            Assert.True(committed > 0);
            // Crash. Replicas re-send everything not acknowledged (here: everything, to be harsh).
            var second = new PostSqVoter(Receiver, 1, r => c.Rings[r], new FileDeliveryCursorStore(path));
            foreach (var b in batches)
            {
                for (var r = 0; r < 4; r++)
                {
                    delivered.AddRange(second.OnReplicaOutput(ReplicaOutputRenderer.Render(b, r, 4, c.Rings[r]), 0).Deliveries);
                }
            }
            second.CommitDelivered();
            foreach (var s in new[] { 1, 2 })
            {
                Assert.Equal(Enumerable.Range(1, 20).Select(i => (long)i), delivered.Where(d => d.Sender == s).Select(d => d.RouteSeq));
            }
            Assert.Equal([new DeliveredCursor(1, 20), new DeliveredCursor(2, 20)], second.CommittedCursors());
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void Votes_beyond_the_window_are_dropped_and_counted()
    {
        var c = Cluster.Create(1, []);
        var voter = new PostSqVoter(Receiver, 1, r => c.Rings[r], new InMemoryDeliveryCursorStore(), new PostSqOptions { VoteWindow = 4 });
        var item = new QueuedItem(1, 9, 5, TaggedHash.DataDigest("x"u8), "x"u8.ToArray());
        voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, [item]), 0, true, c.Rings[0]), 0);
        Assert.Equal(1, voter.Drops[SieveStage.Vote, DropReason.OutsideVoteWindow]);
        // A batch for another receiver, or with a bad MAC, is refused as a whole.
        Assert.False(voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(101, 1, [item]), 0, true, c.Rings[0]), 0).Accepted);
        Assert.False(voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, [item]), 0, true, c.Rings[1]), 0).Accepted);
    }

    /// <summary>Issue 16, item 4: a replica naming senders the enrolment does not list makes the voter keep nothing for them.</summary>
    [Fact]
    public void Votes_for_senders_outside_the_enrolment_keep_no_state()
    {
        var c = Cluster.Create(1, []);
        var voter = new PostSqVoter(Receiver, 1, r => c.Rings[r], new InMemoryDeliveryCursorStore(), new PostSqOptions { EnrolledSenders = new HashSet<int> { 1 } });
        var invented = Enumerable.Range(1_000, 500).Select(s => new QueuedItem(s, 1, 1, TaggedHash.DataDigest("x"u8), "x"u8.ToArray())).ToList();
        Assert.True(voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, invented), 0, true, c.Rings[0]), 0).Accepted);
        Assert.Equal(0, voter.TrackedSenders);
        Assert.Equal(500, voter.Drops[SieveStage.Vote, DropReason.NotEnrolled]);
        Assert.Equal(0, voter.BodyBytesHeldFrom(0));

        // The enrolled sender is voted and delivered as usual.
        var item = new QueuedItem(1, 9, 1, TaggedHash.DataDigest("y"u8), "y"u8.ToArray());
        voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, [item]), 0, true, c.Rings[0]), 0);
        var step = voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, [item]), 1, false, c.Rings[1]), 0);
        Assert.Single(step.Deliveries);
        Assert.Equal(1, voter.TrackedSenders);
    }

    /// <summary>
    /// A sender enrolled through the ordering after the receiver started: voted on once f+1 replicas named it, even
    /// while a faulty replica floods the voter with invented senders; one replica alone never gets state kept for one.
    /// </summary>
    [Fact]
    public void A_sender_outside_the_enrolment_is_voted_on_once_f_plus_one_replicas_named_it()
    {
        var c = Cluster.Create(1, []);
        var voter = new PostSqVoter(Receiver, 1, r => c.Rings[r], new InMemoryDeliveryCursorStore(), new PostSqOptions { EnrolledSenders = new HashSet<int> { 1 } });
        var invented = Enumerable.Range(1_000, 500).Select(s => new QueuedItem(s, 1, 1, TaggedHash.DataDigest("x"u8), "x"u8.ToArray())).ToList();
        var item = new QueuedItem(7, 1, 1, TaggedHash.DataDigest("new"u8), "new"u8.ToArray());
        byte[] From(int replica, params QueuedItem[] items) => ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, items), replica, true, c.Rings[replica]);

        voter.OnReplicaOutput(From(0, item), 0);
        voter.OnReplicaOutput(From(3, [.. invented]), 0);
        Assert.Equal(0, voter.TrackedSenders);
        // The second replica naming sender 7 makes f+1: its vote counts, and the first replica's retransmission completes the slot.
        Assert.Empty(voter.OnReplicaOutput(From(1, item), 0).Deliveries);
        var step = voter.OnReplicaOutput(From(0, item), 0);
        Assert.Equal([7], step.Deliveries.Select(d => d.Sender));
        Assert.Equal(1, voter.VouchedSenders);
        Assert.Equal(1, voter.TrackedSenders);
    }

    /// <summary>
    /// Issue 16, item 4: a faulty replica vouches for its own bodies, so without a budget it could park a body in
    /// every slot of every sender's window. Its bodies stop at the budget; the honest replicas' are unaffected, a
    /// quorum's body is fetched when its own was refused, and delivery gives the budget back.
    /// </summary>
    [Fact]
    public void A_replicas_waiting_bodies_are_held_within_its_byte_budget()
    {
        var c = Cluster.Create(1, []);
        var voter = new PostSqVoter(Receiver, 1, r => c.Rings[r], new InMemoryDeliveryCursorStore(), new PostSqOptions { MaxBodyBytesPerReplica = 1_000 });
        // Replica 3 sends 100-byte bodies for route numbers 2..21 (number 1 never comes): only ten fit.
        var flood = Enumerable.Range(2, 20).Select(i =>
        {
            var data = new byte[100];
            data[0] = (byte)i;
            return new QueuedItem(1, i, i, TaggedHash.DataDigest(data), data);
        }).ToList();
        voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, flood), 3, true, c.Rings[3]), 0);
        Assert.Equal(1_000, voter.BodyBytesHeldFrom(3));
        Assert.Equal(10, voter.Drops[SieveStage.Vote, DropReason.OverBudget]);

        // Replica 0 is not charged for replica 3's bodies: its own body for number 1 is kept, and with replica 1's
        // vote it delivers; the budget of replica 0 comes back with the delivery.
        var first = new QueuedItem(1, 1, 1, TaggedHash.DataDigest("a"u8), "a"u8.ToArray());
        voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, [first]), 0, true, c.Rings[0]), 0);
        Assert.Equal(1, voter.BodyBytesHeldFrom(0));
        var step = voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, [first]), 1, false, c.Rings[1]), 0);
        Assert.Equal([1L], step.Deliveries.Select(d => d.RouteSeq).ToArray());
        Assert.Equal(0, voter.BodyBytesHeldFrom(0));

        // Route number 2 (replica 3 kept its body) delivers once a second replica votes for it, and frees replica 3's budget.
        var second = flood[0];
        step = voter.OnReplicaOutput(ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 2, [second]), 1, false, c.Rings[1]), 0);
        Assert.Equal([2L], step.Deliveries.Select(d => d.RouteSeq).ToArray());
        Assert.Equal(900, voter.BodyBytesHeldFrom(3));
    }

    [Fact]
    public void Fuzzed_inputs_never_throw_from_the_voter()
    {
        var c = Cluster.Create(1, []);
        var voter = new PostSqVoter(Receiver, 1, r => c.Rings[r], new InMemoryDeliveryCursorStore());
        var item = new QueuedItem(1, 9, 1, TaggedHash.DataDigest("x"u8), "x"u8.ToArray());
        var seed = ReplicaOutputRenderer.Render(new OutboxBatch(Receiver, 1, [item]), 0, true, c.Rings[0]);
        var fetchSeed = BodyFetchCodec.EncodeResponse(0, Receiver, 1, [new FetchedBody(1, 1, 9, "x"u8.ToArray())], c.Rings[0]);
        var rng = new Random(17);
        for (var i = 0; i < 20_000; i++)
        {
            voter.OnReplicaOutput(EnvelopeTests.Mutate(seed, rng), i);
            voter.OnBodyFetchResponse(EnvelopeTests.Mutate(fetchSeed, rng), i);
        }
    }
}
