using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.PreSq;

/// <summary>
/// The pre-SQ's checks (paper 4.3.2), cheapest first, in the paper's order: (a) whitelist and
/// quarantine, (b) sequence window, (c) MAC — undoing (b) when it fails, so a forged frame cannot
/// burn the number of the genuine message that follows — and (d) the sender's grant. A frame dropped
/// by (d) also has its (b) mark undone: it was not forwarded, and the sender's retransmission of it
/// must not look like a replay here. ACKREQs skip (b) (they carry no message number) but pass (a),
/// (c) and (d).
/// <para>
/// Time is the pre-SQ's own clock, passed in. Not thread-safe: a host running several event loops
/// gives each its own filter and routes each sender to one of them.
/// </para>
/// </summary>
public sealed class PreSqFilter
{
    private const string Component = "pre-sq";

    private readonly int _id;
    private readonly PreSqOptions _options;
    private readonly SenderWhitelist _whitelist;
    private readonly Func<int, MacKeyRing?> _ringFor;
    private readonly Dictionary<int, SenderState> _senders = [];
    private readonly Dictionary<int, (long Rate, long Burst)> _grantOverrides = [];
    private readonly Dictionary<int, long> _heldBackUntil = [];
    private readonly DropCounters _drops = new(Component);

    /// <param name="ringFor">MAC ring shared with a sender (null: none, the frame fails (c)).</param>
    public PreSqFilter(int preSqId, PreSqOptions options, SenderWhitelist whitelist, Func<int, MacKeyRing?> ringFor)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(whitelist);
        ArgumentNullException.ThrowIfNull(ringFor);
        _id = preSqId;
        _options = options;
        _whitelist = whitelist;
        _ringFor = ringFor;
    }

    public DropCounters Drops => _drops;

    public long PassedCount { get; private set; }

    /// <summary>Windows reset by a number far ahead after the sender had been quiet here (<see cref="PreSqOptions.ReadoptAfterMs"/>).</summary>
    public long Readoptions { get; private set; }

    public SenderWhitelist Whitelist => _whitelist;

    /// <summary>Quarantines the replicas agreed on that this pre-SQ followed (each result naming a sender counts).</summary>
    public long QuarantinesFollowed { get; private set; }

    /// <summary>Senders whose frames are held back now or were until recently (at most the whitelisted senders).</summary>
    public int HeldBackSenders => _heldBackUntil.Count;

    /// <summary>
    /// Follows the quarantines f+1 replicas reported in an ordering result: the sender's frames are refused at (a)
    /// for the hold the replicas gave (from <paramref name="nowMs"/>, this pre-SQ's clock), so a sender the replicas
    /// already drop no longer costs the ordering. The latest result's hold wins: it reflects the latest agreed state.
    /// Only whitelisted senders are followed, which bounds the table.
    /// </summary>
    public void FollowQuarantines(IReadOnlyList<SenderQuarantineHold> holds, long nowMs)
    {
        ArgumentNullException.ThrowIfNull(holds);
        foreach (var h in holds)
        {
            if (_whitelist.IsAllowed(h.Sender))
            {
                _heldBackUntil[h.Sender] = nowMs + Math.Clamp(h.HoldMs, 0, ExecuteResultCodec.MaxHoldMs);
                QuarantinesFollowed++;
            }
        }
    }

    /// <summary>Changes one sender's grant (paper: adjusted dynamically to available and consumed resources).</summary>
    public void AdjustGrant(int sender, long ratePerSecond, long burst)
    {
        _grantOverrides[sender] = (ratePerSecond, burst);
        if (_senders.TryGetValue(sender, out var s))
        {
            s.Grant.Adjust(ratePerSecond, burst);
        }
    }

    public PreSqVerdict Inspect(ReadOnlyMemory<byte> frame, long nowMs)
    {
        SenderFrame f;
        int sender;
        long seq = 0;
        long ackNonce = 0;
        try
        {
            f = SenderFrameCodec.Decode(frame);
            if (f.BodyKind == StructureKind.SenderMessage)
            {
                var m = SenderMessageCodec.Decode(f.Body);
                sender = m.Sender;
                seq = m.Seq;
            }
            else
            {
                var a = AckRequestCodec.Decode(f.Body);
                sender = a.Sender;
                ackNonce = a.Nonce;
            }
        }
        catch (MalformedEnvelopeException)
        {
            return Dropped(SieveStage.Parse, DropReason.Malformed);
        }
        if (f.PreSq != _id)
        {
            return Dropped(SieveStage.Parse, DropReason.WrongDestination, sender, seq);
        }

        // (a)
        if (!_whitelist.IsAllowed(sender))
        {
            return Dropped(SieveStage.Whitelist, DropReason.NotWhitelisted, sender, seq);
        }
        if (_whitelist.IsQuarantined(sender) || IsHeldBack(sender, nowMs))
        {
            return Dropped(SieveStage.Whitelist, DropReason.Quarantined, sender, seq);
        }
        var state = StateOf(sender, nowMs);

        // (b)
        var marked = false;
        var readopted = false;
        if (f.BodyKind == StructureKind.SenderMessage)
        {
            var stale = nowMs - state.LastPassedMs >= _options.ReadoptAfterMs;
            var ahead = stale && state.Window.Probe(seq) == SequenceCheck.TooFarAhead;
            switch (state.Window.TryMark(seq, adoptAhead: stale))
            {
                case SequenceCheck.Accepted:
                    marked = true;
                    readopted = ahead;
                    break;
                case SequenceCheck.Replay:
                    return Dropped(SieveStage.Sequence, DropReason.Replay, sender, seq);
                case SequenceCheck.TooOld:
                    return Dropped(SieveStage.Sequence, DropReason.TooOld, sender, seq);
                default:
                    return Dropped(SieveStage.Sequence, DropReason.TooFarAhead, sender, seq);
            }
        }

        // (c)
        var ring = _ringFor(sender);
        if (ring is null || !SenderFrameCodec.VerifyMac(frame.Span, ring))
        {
            if (marked)
            {
                state.Window.UndoLastMark();
            }
            return Dropped(SieveStage.Mac, DropReason.BadMac, sender, seq);
        }

        // An ACKREQ has no sequence number, but its nonce only grows: a recorded one replayed here must not spend
        // the sender's grant (its MAC is valid, it is the sender's own frame) nor reach the replicas again.
        if (f.BodyKind == StructureKind.AckRequest && ackNonce <= state.LastAckNonce)
        {
            return Dropped(SieveStage.Sequence, DropReason.StaleNonce, sender, seq);
        }

        // (d)
        if (!state.Grant.TryTake(nowMs))
        {
            if (marked)
            {
                state.Window.UndoLastMark();
            }
            return Dropped(SieveStage.Grant, DropReason.GrantExceeded, sender, seq);
        }
        PassedCount++;
        if (f.BodyKind == StructureKind.AckRequest)
        {
            state.LastAckNonce = ackNonce;
        }
        if (marked)
        {
            // Only messages: the periodic ACKREQs of a sender stuck behind a stale window must not keep it fresh.
            state.LastPassedMs = nowMs;
        }
        if (readopted)
        {
            Readoptions++;
        }
        SieveMetrics.Pass(Component);
        return new PreSqVerdict(true, SieveStage.Grant, default, sender, seq, f.BodyKind, f.Body);
    }

    /// <summary>Messages this pre-SQ passed whose numbers it forgot again because the replicas refused them untaken.</summary>
    public long UntakenForgotten { get; private set; }

    /// <summary>
    /// The replicas refused these messages untaken (their agreed result for one of this pre-SQ's requests): forget
    /// having passed them, so the senders' retransmissions are not refused here as replays. Without this a message
    /// refused for back-pressure after it had passed every pre-SQ could never be delivered.
    /// </summary>
    public void Untaken(IReadOnlyList<UntakenMessage> messages)
    {
        ArgumentNullException.ThrowIfNull(messages);
        foreach (var m in messages)
        {
            if (_senders.TryGetValue(m.Sender, out var s))
            {
                s.Window.Unmark(m.Seq);
                UntakenForgotten++;
            }
        }
    }

    private bool IsHeldBack(int sender, long nowMs)
    {
        if (!_heldBackUntil.TryGetValue(sender, out var until))
        {
            return false;
        }
        if (nowMs < until)
        {
            return true;
        }
        _heldBackUntil.Remove(sender);
        return false;
    }

    private SenderState StateOf(int sender, long nowMs)
    {
        if (!_senders.TryGetValue(sender, out var s))
        {
            var (rate, burst) = _grantOverrides.TryGetValue(sender, out var o) ? o : (_options.GrantRatePerSecond, _options.GrantBurst);
            s = new SenderState(new SequenceWindow(_options.WindowSize, _options.MaxAhead, adoptFirst: true), new GrantBucket(rate, burst, nowMs), nowMs);
            _senders.Add(sender, s);
        }
        return s;
    }

    private sealed class SenderState(SequenceWindow window, GrantBucket grant, long createdMs)
    {
        public SequenceWindow Window { get; } = window;

        public GrantBucket Grant { get; } = grant;
        /// <summary>The highest ACKREQ nonce passed for this sender.</summary>
        public long LastAckNonce { get; set; }

        /// <summary>When a message of this sender last passed every check here.</summary>
        public long LastPassedMs { get; set; } = createdMs;
    }

    private PreSqVerdict Dropped(SieveStage stage, DropReason reason, int sender = -1, long seq = 0)
    {
        _drops.Count(stage, reason);
        return PreSqVerdict.Drop(stage, reason, sender, seq);
    }
}
