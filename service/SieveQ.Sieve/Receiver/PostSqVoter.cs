using System.Security.Cryptography;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Receiver;

/// <summary>
/// The post-SQ (paper 4.3.4, Algorithm 1), voting on digests. Each replica's output batch is MAC-checked
/// with that replica's key; each item is a vote of that replica for (sender, route number) = (sender
/// sequence number, DATA digest). A replica votes once per slot: a later different vote is equivocation
/// and ignored. A slot is delivered once f+1 replicas vote for the same value and a body with that
/// digest is known (from any replica: the designated one, or any other through a body fetch); slots are
/// delivered per sender strictly in route order, each exactly once.
/// <para>
/// Route numbers, not the sender's own sequence numbers, are what must be contiguous: a sender's
/// numbers reach one receiver with gaps (messages to others, rule denials), while the replicas number
/// each (sender, receiver) route's approved messages without gaps, identically.
/// </para>
/// <para>
/// Restart: <see cref="CommitDelivered"/> persists the cursors of what was handed out; the host calls it
/// once the application has taken the deliveries (at least once per batch). A restarted voter resumes
/// after the committed cursors; replicas keep what was not acknowledged and re-send it. Not thread-safe.
/// </para>
/// </summary>
public sealed class PostSqVoter
{
    private const string Component = "post-sq";

    private readonly int _receiver;
    private readonly int _f;
    private readonly int _n;
    private readonly Func<int, MacKeyRing?> _ringFor;
    private readonly IDeliveryCursorStore _store;
    private readonly PostSqOptions _options;
    private readonly SortedDictionary<int, SenderSlots> _senders = [];
    // Senders outside the enrolment the voter was given (enrolled later, through the ordering): the replicas that
    // named each, until f+1 did (then one correct replica took its messages, so it is enrolled) and it is vouched for.
    private readonly Dictionary<int, HashSet<int>> _unlisted = [];
    private readonly HashSet<int> _vouched = [];
    // Each replica's nominations, oldest first, at most MaxUnlistedSenders: a faulty replica evicts only its own.
    private readonly Queue<int>[] _nominations;
    private readonly DropCounters _drops = new(Component);
    private long _fetchNonce;
    private readonly long[] _bodyBytes;
    // Per replica: slots it was designated for, delivered in a row without its vote and with nothing from it since.
    private readonly int[] _missedInARow;

    private sealed class SenderSlots
    {
        public long Expected = 1;
        public long Committed;
        public readonly SortedDictionary<long, VoteSlot> Slots = [];
    }

    public PostSqVoter(int receiver, int f, Func<int, MacKeyRing?> ringForReplica, IDeliveryCursorStore store, PostSqOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(ringForReplica);
        ArgumentNullException.ThrowIfNull(store);
        ArgumentOutOfRangeException.ThrowIfNegative(f);
        _receiver = receiver;
        _f = f;
        _n = 3 * f + 1;
        _ringFor = ringForReplica;
        _store = store;
        _options = options ?? new PostSqOptions();
        _bodyBytes = new long[_n];
        _missedInARow = new int[_n];
        _nominations = Enumerable.Range(0, _n).Select(_ => new Queue<int>()).ToArray();
        foreach (var c in store.Load())
        {
            _senders[c.Sender] = new SenderSlots { Expected = c.DeliveredUpTo + 1, Committed = c.DeliveredUpTo };
        }
    }

    public DropCounters Drops => _drops;

    /// <summary>Bytes of bodies a replica has waiting in undelivered slots (bounded by <see cref="PostSqOptions.MaxBodyBytesPerReplica"/>).</summary>
    public long BodyBytesHeldFrom(int replica) => replica >= 0 && replica < _n ? _bodyBytes[replica] : 0;

    /// <summary>Senders the voter keeps state for.</summary>
    public int TrackedSenders => _senders.Count;

    public long DeliveredCount { get; private set; }

    /// <summary>Next route number expected from a sender (1 when none delivered).</summary>
    public long ExpectedFrom(int sender) => _senders.TryGetValue(sender, out var s) ? s.Expected : 1;

    /// <summary>Takes one replica output batch (Algorithm 1, lines 5 to 13, per item).</summary>
    public PostSqStep OnReplicaOutput(ReadOnlyMemory<byte> bytes, long nowMs)
    {
        ReplicaOutput batch;
        try
        {
            batch = ReplicaOutputCodec.Decode(bytes);
        }
        catch (MalformedEnvelopeException)
        {
            _drops.Count(SieveStage.Parse, DropReason.Malformed);
            return PostSqStep.Rejected;
        }
        if (batch.Replica >= _n || batch.Receiver != _receiver)
        {
            _drops.Count(SieveStage.Vote, DropReason.WrongDestination);
            return PostSqStep.Rejected;
        }
        var ring = _ringFor(batch.Replica);
        if (ring is null || !ReplicaOutputCodec.VerifyMac(bytes.Span, ring))
        {
            _drops.Count(SieveStage.Vote, DropReason.BadMac);
            return PostSqStep.Rejected;
        }
        _missedInARow[batch.Replica] = 0;
        var designated = ReplicaOutputRenderer.DesignatedReplica(batch.BatchNo, _receiver, _n);
        var touched = new SortedSet<int>();
        foreach (var item in batch.Items)
        {
            if (Vote(batch.Replica, item, designated))
            {
                touched.Add(item.Sender);
            }
        }
        return Progress(touched, nowMs);
    }

    /// <summary>Takes a body fetch answer: bodies whose digest some replica voted for are kept.</summary>
    public PostSqStep OnBodyFetchResponse(ReadOnlyMemory<byte> bytes, long nowMs)
    {
        BodyFetchResponse res;
        try
        {
            res = BodyFetchCodec.DecodeResponse(bytes);
        }
        catch (MalformedEnvelopeException)
        {
            _drops.Count(SieveStage.Parse, DropReason.Malformed);
            return PostSqStep.Rejected;
        }
        var ring = res.Replica < _n ? _ringFor(res.Replica) : null;
        if (res.Receiver != _receiver || ring is null || !BodyFetchCodec.VerifyResponseMac(bytes.Span, ring))
        {
            _drops.Count(SieveStage.Vote, DropReason.BadMac);
            return PostSqStep.Rejected;
        }
        var touched = new SortedSet<int>();
        foreach (var b in res.Items)
        {
            if (!_senders.TryGetValue(b.Sender, out var s) || !s.Slots.TryGetValue(b.RouteSeq, out var slot))
            {
                continue;
            }
            var digest = TaggedHash.DataDigest(b.Body.Span);
            if (slot.Votes.Values.Any(v => v.DataDigest == digest))
            {
                if (KeepBody(slot, digest, b.Body, res.Replica))
                {
                    touched.Add(b.Sender);
                }
            }
            else
            {
                _drops.Count(SieveStage.Vote, DropReason.BodyMismatch);
            }
        }
        return Progress(touched, nowMs);
    }

    /// <summary>Fetches that fell due (first ones after the grace period, then retries to other voters).</summary>
    public IReadOnlyList<FetchOrder> Tick(long nowMs) => Fetches(nowMs);

    /// <summary>Earliest time a fetch becomes due (null: none waiting).</summary>
    public long? NextWakeupMs
    {
        get
        {
            long? next = null;
            foreach (var s in _senders.Values)
            {
                foreach (var (_, slot, _) in BlockedRun(s))
                {
                    if (slot.NextFetchAtMs >= 0)
                    {
                        next = next is null ? slot.NextFetchAtMs : Math.Min(next.Value, slot.NextFetchAtMs);
                    }
                }
            }
            return next;
        }
    }

    /// <summary>Persists the cursors of everything delivered so far; call after the application took the deliveries.</summary>
    public void CommitDelivered()
    {
        var changed = false;
        foreach (var s in _senders.Values)
        {
            if (s.Committed != s.Expected - 1)
            {
                s.Committed = s.Expected - 1;
                changed = true;
            }
        }
        if (changed)
        {
            _store.Save(CommittedCursors());
        }
    }

    /// <summary>Committed cursors, by sender: the content of the acknowledgement to the replicas.</summary>
    public IReadOnlyList<DeliveredCursor> CommittedCursors() =>
        _senders.Where(kv => kv.Value.Committed > 0).Select(kv => new DeliveredCursor(kv.Key, kv.Value.Committed)).ToArray();

    /// <summary>The signed acknowledgement the host submits for ordering (through any pre-SQ or its own ordering client).</summary>
    public byte[] BuildAcknowledgement(ECDsa receiverKey) => ReceiverAckCodec.Encode(_receiver, CommittedCursors(), receiverKey);

    /// <summary>Senders outside the given enrolment that f+1 replicas named (bounded by <see cref="PostSqOptions.MaxSenders"/>).</summary>
    public int VouchedSenders => _vouched.Count;

    /// <summary>
    /// Whether f+1 replicas named a sender the enrolment given at start does not list. The votes that name it before
    /// then are dropped (the replicas send again what was not acknowledged). Each replica's nominations are bounded by
    /// <see cref="PostSqOptions.MaxUnlistedSenders"/> (its oldest forgotten first), so f faulty replicas naming
    /// invented senders hold little and cannot crowd out the senders correct replicas name.
    /// </summary>
    private bool Vouched(int replica, int sender)
    {
        if (_vouched.Contains(sender))
        {
            return true;
        }
        if (replica < 0 || replica >= _n || _vouched.Count >= _options.MaxSenders)
        {
            return false;
        }
        if (!_unlisted.TryGetValue(sender, out var named))
        {
            named = [];
            _unlisted.Add(sender, named);
        }
        if (named.Add(replica))
        {
            var mine = _nominations[replica];
            mine.Enqueue(sender);
            if (mine.Count > _options.MaxUnlistedSenders)
            {
                var oldest = mine.Dequeue();
                if (_unlisted.TryGetValue(oldest, out var others) && others.Remove(replica) && others.Count == 0)
                {
                    _unlisted.Remove(oldest);
                }
            }
        }
        if (named.Count < _f + 1)
        {
            return false;
        }
        _unlisted.Remove(sender);
        foreach (var r in named)
        {
            var kept = _nominations[r].Where(s => s != sender).ToArray();
            _nominations[r].Clear();
            foreach (var s in kept)
            {
                _nominations[r].Enqueue(s);
            }
        }
        _vouched.Add(sender);
        return true;
    }

    private bool Vote(int replica, OutputItem item, int designated)
    {
        if (_options.EnrolledSenders is { } enrolled && !enrolled.Contains(item.Sender) && !Vouched(replica, item.Sender))
        {
            _drops.Count(SieveStage.Vote, DropReason.NotEnrolled);
            return false;
        }
        if (!_senders.TryGetValue(item.Sender, out var s))
        {
            if (_senders.Count >= _options.MaxSenders)
            {
                _drops.Count(SieveStage.Vote, DropReason.OutsideVoteWindow);
                return false;
            }
            s = new SenderSlots();
            _senders.Add(item.Sender, s);
        }
        if (item.RouteSeq < s.Expected)
        {
            _drops.Count(SieveStage.Vote, DropReason.Duplicate);
            return false;
        }
        if (item.RouteSeq >= s.Expected + _options.VoteWindow)
        {
            _drops.Count(SieveStage.Vote, DropReason.OutsideVoteWindow);
            return false;
        }
        if (!s.Slots.TryGetValue(item.RouteSeq, out var slot))
        {
            slot = new VoteSlot { Designated = designated };
            s.Slots.Add(item.RouteSeq, slot);
        }
        var vote = new VoteSlot.Vote(item.SenderSeq, item.DataDigest);
        if (slot.Votes.TryGetValue(replica, out var earlier))
        {
            _drops.Count(SieveStage.Vote, earlier == vote ? DropReason.Duplicate : DropReason.Equivocation);
            if (earlier != vote)
            {
                return false;
            }
        }
        else
        {
            slot.Votes.Add(replica, vote);
        }
        if (item.Body is { } body)
        {
            // A body only counts under the digest its own replica vouched for, and only if it hashes to it.
            if (TaggedHash.DataDigest(body.Span) == item.DataDigest)
            {
                KeepBody(slot, item.DataDigest, body, replica);
            }
            else
            {
                _drops.Count(SieveStage.Vote, DropReason.BodyMismatch);
                // Its body came and was wrong: the grace for a body in flight has nothing left to wait for.
                slot.BodyRefusedFrom = replica;
                if (slot.NextFetchAtMs > 0)
                {
                    slot.NextFetchAtMs = 0;
                }
            }
        }
        return true;
    }

    /// <summary>Keeps a checked body unless the slot has it already or its replica's budget is spent.</summary>
    private bool KeepBody(VoteSlot slot, Digest digest, ReadOnlyMemory<byte> body, int replica)
    {
        if (slot.Bodies.ContainsKey(digest))
        {
            return true;
        }
        if (_bodyBytes[replica] + body.Length > _options.MaxBodyBytesPerReplica)
        {
            _drops.Count(SieveStage.Vote, DropReason.OverBudget);
            return false;
        }
        slot.Bodies.Add(digest, body.ToArray());
        slot.BodyFrom.Add(digest, replica);
        _bodyBytes[replica] += body.Length;
        return true;
    }

    private void ReleaseBodies(VoteSlot slot)
    {
        foreach (var (digest, from) in slot.BodyFrom)
        {
            _bodyBytes[from] -= slot.Bodies[digest].Length;
        }
    }

    /// <summary>Algorithm 1 lines 9-13 for each touched sender, then any fetches that are due.</summary>
    private PostSqStep Progress(SortedSet<int> touched, long nowMs)
    {
        var deliveries = new List<Delivery>();
        foreach (var sender in touched)
        {
            var s = _senders[sender];
            while (s.Slots.TryGetValue(s.Expected, out var slot))
            {
                if (slot.Quorum(_f + 1) is not { } q)
                {
                    break;
                }
                if (!slot.Bodies.TryGetValue(q.DataDigest, out var body))
                {
                    break;
                }
                deliveries.Add(new Delivery(sender, q.SenderSeq, s.Expected, body));
                if (slot.Designated >= 0 && !slot.Votes.ContainsKey(slot.Designated))
                {
                    _missedInARow[slot.Designated] = Math.Min(_missedInARow[slot.Designated] + 1, _options.SilentAfterMissedSlots);
                }
                ReleaseBodies(slot);
                s.Slots.Remove(s.Expected);
                s.Expected++;
                DeliveredCount++;
            }
        }
        if (deliveries.Count > 0)
        {
            SieveMetrics.Pass(Component, deliveries.Count);
        }
        return new PostSqStep(true, deliveries, Fetches(nowMs));
    }

    private List<FetchOrder> Fetches(long nowMs)
    {
        var wanted = new SortedDictionary<int, List<BodyWanted>>();
        foreach (var (sender, s) in _senders)
        {
            foreach (var (routeSeq, slot, q) in BlockedRun(s))
            {
                if (slot.NextFetchAtMs < 0)
                {
                    // Give the designated replica a moment; its body may be in flight behind the digests.
                    slot.NextFetchAtMs = slot.BodyRefusedFrom >= 0 || DesignatedIsSilent(slot) ? nowMs : nowMs + _options.FetchGraceMs;
                }
                if (slot.NextFetchAtMs > nowMs)
                {
                    continue;
                }
                var voters = slot.VotersFor(q);
                var askable = voters.Length > 1 ? voters.Where(v => v != slot.BodyRefusedFrom).ToArray() : voters;
                var next = askable.FirstOrDefault(v => v > slot.LastAsked, askable[0]);
                slot.LastAsked = next;
                slot.NextFetchAtMs = nowMs + _options.FetchRetryMs;
                if (!wanted.TryGetValue(next, out var list))
                {
                    list = [];
                    wanted.Add(next, list);
                }
                if (list.Count < _options.MaxFetchItems)
                {
                    list.Add(new BodyWanted(sender, routeSeq, q.DataDigest));
                }
            }
        }
        var orders = new List<FetchOrder>();
        foreach (var (replica, list) in wanted)
        {
            var ring = _ringFor(replica);
            if (ring is not null)
            {
                orders.Add(new FetchOrder(replica, BodyFetchCodec.EncodeRequest(_receiver, replica, ++_fetchNonce, list, ring)));
            }
        }
        return orders;
    }

    private bool DesignatedIsSilent(VoteSlot slot) =>
        slot.Designated >= 0 && !slot.Votes.ContainsKey(slot.Designated) && _missedInARow[slot.Designated] >= _options.SilentAfterMissedSlots;

    /// <summary>
    /// Slots from the head on, while each has a quorum, that lack the quorum's body: what blocks
    /// delivery now or right after the head. Capped at MaxFetchItems per sender.
    /// </summary>
    private IEnumerable<(long RouteSeq, VoteSlot Slot, VoteSlot.Vote Quorum)> BlockedRun(SenderSlots s)
    {
        var found = 0;
        for (var r = s.Expected; found < _options.MaxFetchItems && s.Slots.TryGetValue(r, out var slot); r++)
        {
            if (slot.Quorum(_f + 1) is not { } q)
            {
                yield break;
            }
            if (!slot.Bodies.ContainsKey(q.DataDigest))
            {
                found++;
                yield return (r, slot, q);
            }
        }
    }
}
