using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sieve.Tests;

public sealed class ReplicaDeterminismTests : IClassFixture<TestWorld>
{
    private readonly TestWorld _w;

    public ReplicaDeterminismTests(TestWorld w) => _w = w;

    private static readonly ReplicaSieveOptions Options = new()
    {
        WindowSize = 256,
        MaxAhead = 256,
        GrantRatePerSecond = 200,
        GrantBurst = 60,
        ReorderThreshold = 16,
        ReorderPatience = 20,
        ReceiverQueueCapacity = 120,
        OutputBatchMaxItems = 7,
        SenderSuspicion = new(QuarantineAt: 60, ReleaseBelow: 20, DecayPerSecond: 10),
        PreSqSuspicion = new(QuarantineAt: 400, ReleaseBelow: 100, DecayPerSecond: 40),
    };

    /// <summary>A random decided stream: valid, duplicated, reordered, tampered and batch-signed messages, ACKREQs, WARNREQs and receiver acks.</summary>
    private List<(DecisionContext Context, List<ClientRequest> Requests)> Stream(int seed, int decisions)
    {
        var rng = new Random(seed);
        var next = TestWorld.SenderIds.ToDictionary(s => s, _ => 1L);
        var nonce = TestWorld.SenderIds.ToDictionary(s => s, _ => 0L);
        var sent = new List<byte[]>();
        var gaps = new Queue<byte[]>();
        var stream = new List<(DecisionContext, List<ClientRequest>)>();
        long time = 1_000;
        long reqSeq = 0;
        for (var cid = 1; cid <= decisions; cid++)
        {
            time += rng.Next(0, 80);
            var requests = new List<ClientRequest>();
            for (var r = rng.Next(1, 4); r > 0; r--)
            {
                var preSq = TestWorld.PreSqIds[rng.Next(2)];
                var items = new List<byte[]>();
                for (var k = rng.Next(1, 10); k > 0; k--)
                {
                    var s = TestWorld.SenderIds[rng.Next(3)];
                    var roll = rng.Next(100);
                    if (gaps.Count > 0 && rng.Next(4) == 0)
                    {
                        // A correct sender retransmits what a gap is waiting for: replicas never take past a gap.
                        items.Add(gaps.Dequeue());
                    }
                    else if (roll < 55)
                    {
                        // Occasionally skip a number (to be filled later) so the reorder buffer works.
                        var seq = next[s]++;
                        if (rng.Next(8) == 0)
                        {
                            next[s]++;
                            var skipped = _w.Message(s, seq + 1, TestWorld.ReceiverIds[rng.Next(2)], RandomData(rng));
                            sent.Add(skipped);
                            gaps.Enqueue(skipped);
                        }
                        var m = _w.Message(s, seq, TestWorld.ReceiverIds[rng.Next(2)], RandomData(rng));
                        sent.Add(m);
                        items.Add(m);
                    }
                    else if (roll < 62 && sent.Count > 0)
                    {
                        items.Add(sent[rng.Next(sent.Count)]);
                    }
                    else if (roll < 64)
                    {
                        var t = _w.Message(s, next[s], 100, RandomData(rng));
                        t[^1] ^= 1;
                        items.Add(t);
                    }
                    else if (roll < 72)
                    {
                        var regions = Enumerable.Range(0, rng.Next(2, 5)).Select(_ => SenderMessageCodec.EncodeSignedRegion(s, next[s]++, TestWorld.ReceiverIds[rng.Next(2)], RandomData(rng))).ToList();
                        var batch = BatchSigner.Sign(s, regions, _w.SenderSigning[s]);
                        items.AddRange(batch.OrderBy(_ => rng.Next()));
                    }
                    else if (roll < 80)
                    {
                        items.Add(AckRequestCodec.Encode(s, next[s] - 1, Math.Max(1, next[s] - 1 - rng.Next(0, 50)), ++nonce[s], _w.SenderSigning[s]));
                    }
                    else if (roll < 83)
                    {
                        items.Add(LoadWarningCodec.Encode(new LoadWarning(preSq, 900)));
                    }
                    else if (roll < 92)
                    {
                        var rcv = TestWorld.ReceiverIds[rng.Next(2)];
                        var cursors = TestWorld.SenderIds.Where(_ => rng.Next(2) == 0).Select(x => new DeliveredCursor(x, rng.Next(0, 200))).ToList();
                        items.Add(ReceiverAckCodec.Encode(rcv, cursors, _w.ReceiverSigning[rcv]));
                    }
                    else if (sent.Count > 0)
                    {
                        // A late fill of an earlier gap, or a replay.
                        items.Add(sent[^Math.Min(sent.Count, rng.Next(1, 6))]);
                    }
                }
                requests.Add(TestWorld.Request(preSq, ++reqSeq, items.ToArray()));
            }
            stream.Add((TestWorld.At(cid, time), requests));
        }
        return stream;
    }

    private static byte[] RandomData(Random rng)
    {
        var d = new byte[rng.Next(0, 64)];
        rng.NextBytes(d);
        return d;
    }

    private static string Describe(OutboxContents c) => string.Join("\n",
        c.Batches.Select(b => $"B {b.Receiver} {b.BatchNo} " + string.Join(",", b.Items.Select(i => $"{i.Sender}:{i.SenderSeq}:{i.RouteSeq}:{i.DataDigest}")))
        .Concat(c.AckResponses.Select(a => $"A {a}"))
        .Concat(c.Notices.Select(n => $"N {n}")));

    private static (List<byte[]> Results, string Outbox) Feed(SieveReplicaApplication app, IEnumerable<(DecisionContext Context, List<ClientRequest> Requests)> stream)
    {
        var results = new List<byte[]>();
        var outbox = new System.Text.StringBuilder();
        foreach (var (ctx, reqs) in stream)
        {
            var outcome = app.Execute(ctx, reqs);
            results.AddRange(outcome.Replies);
            outbox.AppendLine(Describe(OutboxContents.Of(outcome)));
        }
        return (results, outbox.ToString());
    }

    /// <summary>Feeds every replica the stream; all must return the same results, emit the same outputs and end in the same snapshot.</summary>
    private static List<(List<byte[]> Results, string Outbox)> FeedAllAndAssertTheyAgree(List<SieveReplicaApplication> apps, List<(DecisionContext Context, List<ClientRequest> Requests)> stream)
    {
        var runs = apps.Select(a => Feed(a, stream)).ToList();
        var snapshots = apps.Select(a => a.TakeSnapshot()).ToList();
        for (var i = 1; i < apps.Count; i++)
        {
            Assert.Equal(runs[0].Results, runs[i].Results);
            Assert.Equal(runs[0].Outbox, runs[i].Outbox);
            Assert.Equal(snapshots[0], snapshots[i]);
        }
        return runs;
    }

    [Fact]
    public void Four_replicas_fed_the_same_stream_agree_to_the_byte()
    {
        var stream = Stream(seed: 42, decisions: 250);
        var apps = Enumerable.Range(0, TestWorld.N).Select(_ => _w.Replica(Options)).ToList();
        // Replica 0 verified ahead of ordering (cache), the others inline: same outcome either way.
        var verifier = apps[0].CreateVerifier(parallelFrom: 4);
        foreach (var (_, reqs) in stream)
        {
            foreach (var r in reqs)
            {
                Assert.True(verifier.Verify(r));
            }
        }
        var runs = FeedAllAndAssertTheyAgree(apps, stream);
        Assert.True(apps[0].Verdicts.Hits > 0);
        // The stream exercised what it should.
        var drops = apps[0].Drops;
        Assert.True(drops.ByReason(Filtering.DropReason.Replay) > 0);
        Assert.True(drops.ByReason(Filtering.DropReason.BadSignature) > 0);
        Assert.Contains("A ", runs[0].Outbox, StringComparison.Ordinal);
        Assert.True(apps[0].Processed > 500, $"processed {apps[0].Processed}; drops: {string.Join(", ", drops.NonZero())}");
    }

    [Fact]
    public void Replicas_with_and_without_payload_prescans_agree_to_the_byte_under_pattern_rules()
    {
        // A pattern set that hits some random payloads (any of three bytes) and not others.
        var json = """
            { "schema": "sieveq-ruleset/v1", "version": 1,
              "patternSets": [{ "name": "marker", "hex": ["ab", "cd", "ef"] }],
              "rules": [{ "name": "screen", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["marker"] }] }
            """u8.ToArray();
        var stream = Stream(seed: 17, decisions: 250);
        var sets = Enumerable.Range(0, TestWorld.N).Select(_ => Rules.RuleSetLoader.CompileUnsigned(json)).ToList();
        var apps = sets.Select(set => _w.Replica(Options, set.CreateEvaluator())).ToList();
        // Replicas 0 and 1 verified (and prescanned) ahead of ordering, the others inline.
        foreach (var app in apps.Take(2))
        {
            var verifier = app.CreateVerifier(parallelFrom: 4);
            Assert.All(stream.SelectMany(d => d.Requests), r => Assert.True(verifier.Verify(r)));
        }
        FeedAllAndAssertTheyAgree(apps, stream);
        Assert.True(apps[0].RuleDenials.Snapshot().Any(d => d.Rule == "screen"), "some payloads must hit the patterns");
        Assert.True(sets[0].Prescans.Found > 0 && sets[1].Prescans.Found > 0);
        Assert.Equal(0, sets[2].Prescans.Found + sets[3].Prescans.Found);
        Assert.True(sets[2].Prescans.ScannedInline > 0);
    }

    [Fact]
    public void Snapshot_and_restore_mid_stream_continues_identically()
    {
        var stream = Stream(seed: 7, decisions: 200);
        var whole = _w.Replica(Options);
        Feed(whole, stream.Take(100));
        var (tailResults, tailOutbox) = Feed(whole, stream.Skip(100));

        var first = _w.Replica(Options);
        Feed(first, stream.Take(100));
        var snap = first.TakeSnapshot();
        var restored = _w.Replica(Options);
        restored.RestoreSnapshot(snap);
        Assert.Equal(snap, restored.TakeSnapshot());
        var (results, outbox) = Feed(restored, stream.Skip(100));
        Assert.Equal(tailResults, results);
        Assert.Equal(tailOutbox, outbox);
        Assert.Equal(whole.TakeSnapshot(), restored.TakeSnapshot());
    }
}
