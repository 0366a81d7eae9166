using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.PreSq;
using SieveQ.Sieve.Replica;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// The replicas' verdict at stages (e)-(f) travels back with the acknowledgement: a sender-SQ, a pre-SQ filter and
/// four replica applications, the sender learning which of its messages were rejected, why and by which rule, from
/// f+1 matching ACKRES. Before, such messages were acknowledged like delivered ones.
/// </summary>
public sealed class VerdictTests : IClassFixture<TestWorld>
{
    private readonly TestWorld _w;

    public VerdictTests(TestWorld w) => _w = w;

    private sealed class Path
    {
        private readonly TestWorld _w;
        private readonly PreSqFilter _filter;
        private readonly List<SieveReplicaApplication> _replicas;
        private long _cid;
        private long _reqSeq;

        public Path(TestWorld w, IApplicationRules[] rules, int lying = -1)
        {
            _w = w;
            _filter = new PreSqFilter(10, new PreSqOptions(), new SenderWhitelist([1, 2, 3]), p => w.SenderPreSqRing(p, 10));
            _replicas = rules.Select(r => w.Replica(rules: r)).ToList();
            Lying = lying;
            Sender = new SenderSq(1, w.SenderSigning[1], new SenderSequencer(new InMemorySequenceStore()), TestWorld.PreSqIds, 10, TestWorld.F,
                p => w.SenderPreSqRing(1, p), r => w.ReplicaSenderRing(r, 1), new SenderSqOptions { AckRequestIntervalMs = 1 });
        }

        public SenderSq Sender { get; }
        public int Lying { get; }
        public List<AcknowledgedVerdicts> Verdicts { get; } = [];
        public List<string> Snapshots => [.. _replicas.Select(r => Convert.ToHexString(r.TakeSnapshot()))];

        public void Run(long now)
        {
            var items = new List<ReadOnlyMemory<byte>>();
            foreach (var f in Sender.Flush(now).Concat(Sender.Tick(now)))
            {
                var v = _filter.Inspect(f.Frame, now);
                Assert.True(v.Passed);
                items.Add(v.Body.ToArray());
            }
            if (items.Count == 0)
            {
                return;
            }
            var req = new Bft.Protocol.ClientRequest(10, ++_reqSeq, OrderingRequestCodec.Encode(10, items));
            _cid++;
            for (var r = 0; r < _replicas.Count; r++)
            {
                var outbox = OutboxContents.Of(_replicas[r].Execute(TestWorld.At(_cid, now), [req]));
                foreach (var a in outbox.AckResponses)
                {
                    // The lying replica says every message was approved.
                    var said = r == Lying ? a with { Rejections = [] } : a;
                    var o = Sender.OnAckResponse(ReplicaOutputRenderer.Render(said, r, _w.ReplicaSenderRing(r, 1)), now);
                    if (o.Newly is { } n)
                    {
                        Verdicts.Add(n);
                    }
                }
            }
        }
    }

    [Fact]
    public void Rejected_messages_come_back_with_reason_and_rule_and_approved_ones_as_approved()
    {
        var rules = Enumerable.Range(0, TestWorld.N).Select(_ => (IApplicationRules)new RoutePolicy([new Route(1, 100, 10)])).ToArray();
        var p = new Path(_w, rules, lying: 3);
        Assert.True(p.Sender.TryEnqueue(100, new byte[5], out _));    // 1: approved
        Assert.True(p.Sender.TryEnqueue(999, new byte[5], out _));    // 2: receiver not enrolled
        Assert.True(p.Sender.TryEnqueue(100, new byte[11], out _));   // 3: above the route's 10 bytes
        Assert.True(p.Sender.TryEnqueue(101, new byte[5], out _));    // 4: enrolled, no route
        Assert.True(p.Sender.TryEnqueue(100, new byte[10], out _));   // 5: approved
        for (var t = 0; t < 20 && p.Sender.AcknowledgedUpTo < 5; t++)
        {
            p.Run(t * 10);
        }
        Assert.Equal(5, p.Sender.AcknowledgedUpTo);
        var all = p.Verdicts.SelectMany(v => v.Rejections).ToList();
        Assert.Equal(
            [
                new MessageRejection(2, RejectionReason.ReceiverNotEnrolled, "receiver 999 is not enrolled"),
                new MessageRejection(3, RejectionReason.RuleDenied, "message too large for route"),
                new MessageRejection(4, RejectionReason.RuleDenied, "route not allowed"),
            ], all);
        Assert.Equal(1, p.Verdicts[0].From);
        Assert.Equal(5, p.Verdicts[^1].UpTo);
        Assert.All(p.Verdicts, v => Assert.True(v.VerdictsFrom <= v.From));
    }

    [Fact]
    public void The_verdicts_are_part_of_the_agreed_state_and_each_replica_forgets_them_once_the_sender_moved_on()
    {
        var rules = Enumerable.Range(0, TestWorld.N).Select(_ => (IApplicationRules)new RoutePolicy([new Route(1, 100, 10)])).ToArray();
        var p = new Path(_w, rules);
        Assert.True(p.Sender.TryEnqueue(999, new byte[5], out _));
        p.Run(0);
        var withRejection = p.Snapshots.Distinct().ToList();
        Assert.Single(withRejection);
        for (var t = 1; t < 20 && p.Sender.AcknowledgedUpTo < 1; t++)
        {
            p.Run(t * 10);
        }
        Assert.Single(p.Verdicts.SelectMany(v => v.Rejections));
        // The next ACKREQ's lowestPending (2) lets the replicas drop the record: the snapshots change and still agree.
        Assert.True(p.Sender.TryEnqueue(100, new byte[5], out _));
        for (var t = 20; t < 40 && p.Sender.AcknowledgedUpTo < 2; t++)
        {
            p.Run(t * 10);
        }
        p.Run(500);
        var after = p.Snapshots.Distinct().ToList();
        Assert.Single(after);
        var rule = Convert.ToHexString("receiver 999 is not enrolled"u8);
        Assert.Contains(rule, withRejection[0], StringComparison.Ordinal);
        Assert.DoesNotContain(rule, after[0], StringComparison.Ordinal);
    }

    [Fact]
    public void Ackres_with_rejections_round_trips_and_malformed_lists_are_refused()
    {
        var ring = _w.ReplicaSenderRing(0, 1);
        var rejections = new[] { new MessageRejection(3, RejectionReason.RuleDenied, new string('x', 300)), new MessageRejection(7, RejectionReason.ReceiverNotEnrolled, "é") };
        var bytes = AckResponseCodec.Encode(0, 1, 0, 9, 10, 5, 2, rejections, ring);
        var r = AckResponseCodec.Decode(bytes);
        Assert.Equal(2, r.VerdictsFrom);
        Assert.Equal(EnvelopeLimits.MaxRejectionRuleBytes, r.Rejections[0].Rule.Length);
        Assert.Equal("é", r.Rejections[1].Rule);
        Assert.True(AckResponseCodec.VerifyMac(bytes, ring));
        Assert.True(bytes.Length <= EnvelopeLimits.MaxAckResponseBytes);
        // A rejection outside verdictsFrom..deliveredUpTo, or out of order, is malformed.
        Assert.Throws<MalformedEnvelopeException>(() => AckResponseCodec.Decode(AckResponseCodec.Encode(0, 1, 0, 5, 10, 5, 1, [new MessageRejection(6, RejectionReason.RuleDenied, "")], ring)));
        Assert.Throws<MalformedEnvelopeException>(() => AckResponseCodec.Decode(AckResponseCodec.Encode(0, 1, 0, 9, 10, 5, 4, [new MessageRejection(3, RejectionReason.RuleDenied, "")], ring)));
        Assert.Throws<MalformedEnvelopeException>(() => AckResponseCodec.Decode(AckResponseCodec.Encode(0, 1, 0, 9, 10, 5, 1,
            [new MessageRejection(5, RejectionReason.RuleDenied, ""), new MessageRejection(5, RejectionReason.RuleDenied, "")], ring)));
        Assert.Throws<MalformedEnvelopeException>(() => AckResponseCodec.Decode(AckResponseCodec.Encode(0, 1, 0, 9, 10, 5, 11, [], ring)));
        var badReason = AckResponseCodec.Encode(0, 1, 0, 9, 10, 5, 1, [new MessageRejection(5, (RejectionReason)9, "")], ring);
        Assert.Throws<MalformedEnvelopeException>(() => AckResponseCodec.Decode(badReason));
    }
}
