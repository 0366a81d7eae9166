using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.PreSq;
using SieveQ.Sieve.Replica;
using SieveQ.Sieve.Sender;
using Xunit.Abstractions;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// A pre-SQ that passes its checks and then forwards none of a sender's messages (ACKREQs and ACKRES still pass, so the
/// sender keeps hearing from the replicas): the sender's retransmissions through the other pre-SQ fill every gap, and
/// the replicas must still see that the assigned pre-SQ loses everything and move the sender off it. Closed loop in
/// virtual time: a real sender-SQ, two real pre-SQ filters and f+1 real replica applications.
/// </summary>
public sealed class DroppingPreSqTests : IClassFixture<TestWorld>
{
    private const int Dropping = 10;
    private const int Honest = 11;
    private readonly TestWorld _w;
    private readonly ITestOutputHelper _output;

    public DroppingPreSqTests(TestWorld w, ITestOutputHelper output)
    {
        _w = w;
        _output = output;
    }

    private sealed class Loop
    {
        private readonly TestWorld _w;
        private readonly Dictionary<int, PreSqFilter> _filters;
        private readonly List<SieveReplicaApplication> _replicas;
        private readonly Dictionary<int, long> _reqSeq = new() { [Dropping] = 0, [Honest] = 0 };
        private List<(int PreSq, ReadOnlyMemory<byte> Body)> _inFlight = [];
        private long _cid;

        public Loop(TestWorld w, int initialPreSq)
        {
            _w = w;
            _filters = TestWorld.PreSqIds.ToDictionary(p => p,
                p => new PreSqFilter(p, new PreSqOptions(), new SenderWhitelist(TestWorld.SenderIds), s => w.SenderPreSqRing(s, p)));
            _replicas = [.. Enumerable.Range(0, TestWorld.F + 1).Select(_ => w.Replica())];
            Sender = new SenderSq(1, w.SenderSigning[1], new SenderSequencer(new InMemorySequenceStore()), TestWorld.PreSqIds, initialPreSq, TestWorld.F,
                p => w.SenderPreSqRing(1, p), r => w.ReplicaSenderRing(r, 1));
        }

        public SenderSq Sender { get; }

        public bool Dropping10 { get; set; }

        public long DroppedMessages { get; private set; }

        public long LastEnqueued { get; private set; }

        /// <summary>The honest pre-SQ warns of load once a second, as a burst of retransmissions could make it.</summary>
        public bool HonestWarns { get; set; }

        public SieveReplicaApplication Replica => _replicas[0];

        /// <summary>One 10 ms step: what the pre-SQs passed in the last step is ordered now (one step of latency).</summary>
        public void Step(long now, int messages)
        {
            for (var i = 0; i < messages; i++)
            {
                if (Sender.TryEnqueue(100, new byte[16], out var seq))
                {
                    LastEnqueued = seq;
                }
            }
            var ordered = _inFlight;
            _inFlight = [];
            foreach (var f in Sender.Flush(now).Concat(Sender.Tick(now)))
            {
                var v = _filters[f.PreSq].Inspect(f.Frame, now);
                if (!v.Passed)
                {
                    continue;
                }
                if (Dropping10 && f.PreSq == Dropping && v.Kind == StructureKind.SenderMessage)
                {
                    DroppedMessages++;
                    continue;
                }
                _inFlight.Add((f.PreSq, v.Body.ToArray()));
            }
            if (HonestWarns && now % 1_000 == 0)
            {
                ordered.Add((Honest, LoadWarningCodec.Encode(new LoadWarning(Honest, 900))));
            }
            var requests = ordered.GroupBy(o => o.PreSq)
                .Select(g => new Bft.Protocol.ClientRequest(g.Key, ++_reqSeq[g.Key], OrderingRequestCodec.Encode(g.Key, [.. g.Select(o => o.Body)])))
                .ToList();
            if (requests.Count == 0)
            {
                return;
            }
            _cid++;
            for (var r = 0; r < _replicas.Count; r++)
            {
                var outbox = OutboxContents.Of(_replicas[r].Execute(TestWorld.At(_cid, now), requests));
                foreach (var a in outbox.AckResponses)
                {
                    Sender.OnAckResponse(ReplicaOutputRenderer.Render(a, r, _w.ReplicaSenderRing(r, 1)), now);
                }
            }
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_pre_sq_that_drops_every_message_loses_its_sender_although_retransmissions_fill_every_gap(bool honestWarns)
    {
        var loop = new Loop(_w, Dropping);
        long now = 0;
        // Five seconds of honest service at 500 msg/s: the sender stays where it started.
        for (; now < 5_000; now += 10)
        {
            loop.Step(now, 5);
        }
        Assert.Equal(Dropping, loop.Sender.AssignedPreSq);
        Assert.Equal(Dropping, loop.Replica.AssignedPreSq(1));
        var before = loop.Sender.AcknowledgedUpTo;

        // The attack; with honestWarns the only other pre-SQ says it is near capacity all along: loss outweighs that.
        loop.Dropping10 = true;
        loop.HonestWarns = honestWarns;
        long movedAt = -1;
        for (; now < 20_000; now += 10)
        {
            loop.Step(now, 5);
            if (now % 1_000 == 0)
            {
                _output.WriteLine($"{now}: assigned {loop.Sender.AssignedPreSq}, acknowledged {loop.Sender.AcknowledgedUpTo} of {loop.LastEnqueued}, rto {loop.Sender.RetransmitTimeoutMs}, retransmitted {loop.Sender.Retransmissions}");
            }
            if (movedAt < 0 && loop.Sender.AssignedPreSq == Honest)
            {
                movedAt = now;
            }
        }
        _output.WriteLine($"moved after {movedAt - 5_000} ms; {loop.DroppedMessages} dropped, {loop.Sender.Retransmissions} retransmitted, acknowledged {before} -> {loop.Sender.AcknowledgedUpTo} of {loop.LastEnqueued}");
        Assert.True(movedAt >= 0, "the sender was never moved off the dropping pre-SQ");
        Assert.Equal(Honest, loop.Replica.AssignedPreSq(1));
        Assert.True(movedAt - 5_000 <= 4_000, $"moved only after {movedAt - 5_000} ms");
        // Once moved, nothing more is dropped and the sender catches up: all but the last moments are acknowledged.
        Assert.True(loop.Sender.AcknowledgedUpTo >= loop.LastEnqueued - 100, $"acknowledged only up to {loop.Sender.AcknowledgedUpTo} of {loop.LastEnqueued}");
    }
}
