using System.Diagnostics;
using System.Threading.Channels;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Deployment;

namespace SieveQ.Sdk.Tests.Fakes;

/// <summary>How a fake replica-SQ renders what its (correct) state machine approved.</summary>
public enum ReplicaBehaviour
{
    Honest,
    /// <summary>Votes for other data: a wrong digest, and a body matching it when designated.</summary>
    WrongDigest,
    /// <summary>The right digest with a body that does not hash to it.</summary>
    WrongBody,
    /// <summary>Digests only, never a body, and no answer to body fetches.</summary>
    WithholdBodies,
}

/// <summary>
/// The ordering layer and the n replica-SQs, in one process: every ordering request is executed, in
/// one total order, by n real <see cref="SieveReplicaApplication"/> instances, and each one's outputs
/// are rendered with its own keys and sent to the post-SQs subscribed to it and, for ACKRES, to the
/// sender's stream at the pre-SQ that forwarded the ACKREQ.
/// </summary>
internal sealed class FakeCluster : IDisposable
{
    private readonly DeploymentContext _ctx;
    private readonly SieveReplicaApplication[] _apps;
    private readonly PublicKeyDirectory[] _directories;
    private readonly PartyKeys[] _replicaKeys;
    private readonly Lock _order = new();
    // Unix milliseconds, as the real cluster's leaders stamp batches: id leases compare them with the claimant's clock.
    private readonly long _agreedOrigin = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    private readonly Stopwatch _agreedTime = Stopwatch.StartNew();
    private readonly Dictionary<(int Replica, int Receiver), Channel<byte[]>> _subscriptions = [];
    private readonly Dictionary<(int PreSq, int Sender), Channel<byte[]>> _senderStreams = [];
    private readonly List<(int PreSq, int Sender, byte[] Bytes)> _heldAckResponses = [];
    private long _cid;
    private long _requestSeq;
    private bool _holdAckResponses;

    public FakeCluster(DeploymentContext ctx)
    {
        _ctx = ctx;
        N = ctx.Config.N;
        Behaviour = new ReplicaBehaviour[N];
        _directories = Enumerable.Range(0, N).Select(_ => new PublicKeyDirectory(ctx.Enrolment)).ToArray();
        _apps = _directories.Select(d => new SieveReplicaApplication(d, ctx.Config.Sieve, new RoutePolicy(ctx.Config.RouteList()))).ToArray();
        _replicaKeys = Enumerable.Range(0, N).Select(i => ctx.Keys(PartyRole.Replica, i)).ToArray();
        FetchCalls = new int[N];
    }

    /// <summary>Added to the agreed time from now on (time passing for the replicas faster than for the test).</summary>
    public long AgreedTimeAheadMs { get; set; }

    public int N { get; }
    public ReplicaBehaviour[] Behaviour { get; }
    public int[] FetchCalls { get; }

    /// <summary>Id leases held now, as replica 0 agreed them.</summary>
    public int IdLeasesHeld
    {
        get
        {
            lock (_order)
            {
                return _apps[0].IdLeasesHeld;
            }
        }
    }

    /// <summary>The fixed routes from a sender as the replicas run them (replica 0's agreed table).</summary>
    public IReadOnlyList<Route> SenderRoutes(int sender) => ((RoutePolicy)_apps[0].Rules).From(sender);

    public int QueueLength(int receiver)
    {
        lock (_order)
        {
            return _apps[0].QueueLength(receiver);
        }
    }

    /// <summary>While set, ACKRES are kept back (the sender sees no acknowledgement) until released.</summary>
    public void HoldAckResponses()
    {
        lock (_order)
        {
            _holdAckResponses = true;
        }
    }

    public void ReleaseAckResponses()
    {
        lock (_order)
        {
            _holdAckResponses = false;
            foreach (var (p, s, bytes) in _heldAckResponses)
            {
                RelayAckResponse(p, s, bytes);
            }
            _heldAckResponses.Clear();
        }
    }

    /// <summary>Orders one request from <paramref name="origin"/> (a pre-SQ) and executes it on every replica.</summary>
    public void Order(int origin, params ReadOnlyMemory<byte>[] items) => Execute(origin, items);

    /// <summary>Orders a request carrying one command (an id lease) and returns its result, which every replica must have given alike.</summary>
    public byte[] OrderCommand(int origin, ReadOnlyMemory<byte> command)
    {
        var replies = Execute(origin, [command]);
        if (replies.Any(r => !r.AsSpan().SequenceEqual(replies[0])))
        {
            throw new InvalidOperationException("the replicas' results for one command differ");
        }
        return replies[0];
    }

    private List<byte[]> Execute(int origin, ReadOnlyMemory<byte>[] items)
    {
        var replies = new List<byte[]>(N);
        lock (_order)
        {
            var request = new ClientRequest(origin, ++_requestSeq, OrderingRequestCodec.Encode(origin, items));
            var decision = new DecisionContext(++_cid, _agreedOrigin + AgreedTimeAheadMs + _agreedTime.ElapsedMilliseconds + 1);
            for (var i = 0; i < N; i++)
            {
                var executed = _apps[i].Execute(decision, [request]);
                replies.Add(executed.Replies[0]);
                var outbox = OutboxContents.Of(executed);
                foreach (var batch in outbox.Batches)
                {
                    if (_subscriptions.TryGetValue((i, batch.Receiver), out var stream))
                    {
                        stream.Writer.TryWrite(Render(i, batch));
                    }
                }
                foreach (var ack in outbox.AckResponses)
                {
                    var ring = _replicaKeys[i].Ring(MacChannel.ReplicaSender, ack.Sender)!;
                    var bytes = ReplicaOutputRenderer.Render(ack, i, ring);
                    if (_holdAckResponses)
                    {
                        _heldAckResponses.Add((ack.ViaPreSq, ack.Sender, bytes));
                    }
                    else
                    {
                        RelayAckResponse(ack.ViaPreSq, ack.Sender, bytes);
                    }
                }
            }
        }
        return replies;
    }

    private void RelayAckResponse(int preSq, int sender, byte[] bytes)
    {
        if (_senderStreams.TryGetValue((preSq, sender), out var stream))
        {
            stream.Writer.TryWrite(bytes);
        }
    }

    /// <summary>A new subscription replaces the older one; it starts with everything unacknowledged (batch 0).</summary>
    public ChannelReader<byte[]> Subscribe(int replica, int receiver)
    {
        lock (_order)
        {
            if (_subscriptions.Remove((replica, receiver), out var old))
            {
                old.Writer.TryComplete();
            }
            var stream = Channel.CreateUnbounded<byte[]>();
            _subscriptions[(replica, receiver)] = stream;
            if (_apps[replica].PendingFor(receiver, 4096) is { } pending)
            {
                stream.Writer.TryWrite(Render(replica, pending));
            }
            return stream.Reader;
        }
    }

    public ChannelReader<byte[]> AttachSender(int preSq, int sender)
    {
        lock (_order)
        {
            if (_senderStreams.Remove((preSq, sender), out var old))
            {
                old.Writer.TryComplete();
            }
            var stream = Channel.CreateUnbounded<byte[]>();
            _senderStreams[(preSq, sender)] = stream;
            return stream.Reader;
        }
    }

    public byte[] FetchBodies(int replica, ReadOnlyMemory<byte> request)
    {
        lock (_order)
        {
            FetchCalls[replica]++;
            if (Behaviour[replica] == ReplicaBehaviour.WithholdBodies)
            {
                return [];
            }
            return _apps[replica].AnswerBodyFetch(request, replica, r => _replicaKeys[replica].Ring(MacChannel.ReplicaReceiver, r)) ?? [];
        }
    }

    public bool VerifySubscription(Subscription s, int replica) =>
        SubscriptionCodec.IsValid(s, replica, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), 30_000,
            (data, signature) => _directories[replica].VerifyReceiver(s.Subscriber, data.Span, signature.Span));

    private byte[] Render(int replica, OutboxBatch batch)
    {
        var ring = _replicaKeys[replica].Ring(MacChannel.ReplicaReceiver, batch.Receiver)!;
        var designated = ReplicaOutputRenderer.IsDesignated(batch.BatchNo, batch.Receiver, replica, N);
        switch (Behaviour[replica])
        {
            case ReplicaBehaviour.WithholdBodies:
                return ReplicaOutputRenderer.Render(batch, replica, withBodies: false, ring);
            case ReplicaBehaviour.WrongDigest:
            {
                var items = batch.Items.Select(i =>
                {
                    var other = i.Data.Append((byte)0x5A).ToArray();
                    return new OutputItem(i.Sender, i.SenderSeq, i.RouteSeq, TaggedHash.DataDigest(other), designated ? other : null);
                }).ToList();
                return ReplicaOutputCodec.Encode(replica, batch.Receiver, batch.BatchNo, items, ring);
            }
            case ReplicaBehaviour.WrongBody:
            {
                var items = batch.Items.Select(i => new OutputItem(i.Sender, i.SenderSeq, i.RouteSeq, i.DataDigest, (ReadOnlyMemory<byte>?)i.Data.Append((byte)1).ToArray())).ToList();
                return ReplicaOutputCodec.Encode(replica, batch.Receiver, batch.BatchNo, items, ring);
            }
            default:
                return ReplicaOutputRenderer.Render(batch, replica, N, ring);
        }
    }

    public void Dispose()
    {
        foreach (var k in _replicaKeys)
        {
            k.Dispose();
        }
        foreach (var d in _directories)
        {
            d.Dispose();
        }
    }
}
