using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Sender;

/// <summary>Result of handing an ACKRES to the sender-SQ.</summary>
public readonly record struct AckResponseOutcome(bool Accepted, long AcknowledgedUpTo, int AssignedPreSq, bool Reassigned, int? AgreedLossPpm,
    AcknowledgedVerdicts? Newly = null);

/// <summary>
/// The verdicts of the messages one ACKRES statement newly acknowledged, numbers <see cref="From"/> to
/// <see cref="UpTo"/>: each listed in <see cref="Rejections"/> was rejected; each other from <see cref="VerdictsFrom"/>
/// on was approved and queued for its receiver; one below <see cref="VerdictsFrom"/> was taken but its verdict is not
/// known (its rejection record was forgotten, or an earlier run sent it).
/// </summary>
public sealed record AcknowledgedVerdicts(long From, long UpTo, long VerdictsFrom, IReadOnlyList<MessageRejection> Rejections);

/// <summary>
/// The sender-SQ (paper 4.3.1 and 4.4.2): numbers, signs (per message or per Merkle batch) and MACs
/// messages for the assigned pre-SQ; keeps every message until f+1 replicas acknowledge it and
/// retransmits on time-out through another pre-SQ; sends ACKREQs on a schedule whose wait doubles
/// while unanswered; moves to the pre-SQ the replicas assign once f+1 agree. A bounded window of
/// outstanding messages is the back-pressure applications see.
/// <para>
/// Pure: the host calls <see cref="TryEnqueue"/>, <see cref="Flush"/>, <see cref="Tick"/> and
/// <see cref="OnAckResponse"/> with the current time and sends the frames returned. Not thread-safe.
/// ACKREQ nonces are <c>(next sequence number &lt;&lt; 20) | counter</c>: they grow within a run and
/// across restarts (the sequencer's numbers do), so replicas never take a restarted sender's ACKREQ
/// for a replay.
/// </para>
/// </summary>
public sealed class SenderSq
{
    private const string Component = "sender-sq";
    private const int NonceCounterBits = 20;

    /// <summary>The sequence number an ACKREQ nonce was built on: a run that starts above it never reuses its nonces.</summary>
    public static long SequenceOfNonce(long nonce) => nonce >> NonceCounterBits;

    private readonly int _sender;
    private readonly ECDsa _key;
    private readonly SenderSequencer _sequencer;
    private readonly int[] _preSqs;
    private readonly Func<int, MacKeyRing?> _preSqRing;
    private readonly Func<int, MacKeyRing?> _replicaRing;
    private readonly SenderSqOptions _options;
    private readonly OutstandingMessages _outstanding = new();
    private readonly AckResponseTally _tally;
    private readonly List<(long Seq, byte[] Region)> _staged = [];
    private readonly Queue<long> _issuedNonces = new();
    private readonly DropCounters _drops = new(Component);
    private readonly RetransmitTimeout _rto;

    private long _lastSent;
    private long _nonceBase;
    private long _nonceCounter;
    private long _lastNonce;
    private bool _lastAnswered = true;
    private int _lastAckTarget;
    private long _lastAckSentAt;
    private long _ackWait;
    private long _nextAckAt = long.MinValue;
    private bool _announced;
    private long _progressAt = long.MinValue;
    private bool _progressSinceTimeout;
    private int _retransmitBudget;
    private int _backoff;
    private long _nextRoundAt = long.MinValue;
    private long _restoredUpTo;
    private long _moves;

    public SenderSq(int sender, ECDsa signingKey, SenderSequencer sequencer, IReadOnlyList<int> preSqs, int initialPreSq, int f,
        Func<int, MacKeyRing?> preSqRing, Func<int, MacKeyRing?> replicaRing, SenderSqOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(signingKey);
        ArgumentNullException.ThrowIfNull(sequencer);
        ArgumentNullException.ThrowIfNull(preSqs);
        if (preSqs.Count == 0 || !preSqs.Contains(initialPreSq))
        {
            throw new ArgumentException("the initial pre-SQ must be one of the pre-SQs", nameof(initialPreSq));
        }
        _sender = sender;
        _key = signingKey;
        _sequencer = sequencer;
        _preSqs = preSqs.Order().ToArray();
        AssignedPreSq = initialPreSq;
        _preSqRing = preSqRing;
        _replicaRing = replicaRing;
        _options = options ?? new SenderSqOptions();
        _tally = new AckResponseTally(f);
        _lastSent = sequencer.Peek - 1;
        _ackWait = _options.AckResponseWaitMs;
        _rto = new RetransmitTimeout(_options.RetransmitAfterMs, _options.MaxRetransmitAfterMs);
        _retransmitBudget = Math.Max(1, _options.MaxBatch);
    }

    /// <summary>The retransmission time-out in force: adapted to measured acknowledgement delays.</summary>
    public long RetransmitTimeoutMs => _rto.CurrentMs;

    /// <summary>Messages sent again (each through another pre-SQ than the time before).</summary>
    public long Retransmissions { get; private set; }

    public int AssignedPreSq { get; private set; }

    public int Outstanding => _outstanding.Count + _staged.Count;

    /// <summary>Messages numbered and not yet flushed (signed and sent).</summary>
    public int Staged => _staged.Count;

    /// <summary>Merkle roots signed so far: each one costs every replica-SQ a signature verification.</summary>
    public long RootsSigned { get; private set; }

    public long AcknowledgedUpTo { get; private set; }

    public long LastSentSeq => _lastSent;

    public DropCounters Drops => _drops;

    /// <summary>When the host should call <see cref="Tick"/> next (null: nothing scheduled).</summary>
    public long? NextWakeupMs
    {
        get
        {
            var d = _outstanding.NextDeadline;
            long? ack = AsksForAcknowledgement ? _nextAckAt : null;
            return d is null ? ack : ack is null ? d : Math.Min(d.Value, ack.Value);
        }
    }

    /// <summary>
    /// Whether ACKREQs are due on their schedule: messages are outstanding, none was sent yet this run, or numbers up to
    /// the last sent are neither acknowledged nor outstanding. The last is a restart's skipped block once its restored
    /// messages are acknowledged: only an ACKREQ whose lowestPending is above it settles it, and without one the last
    /// number stayed unacknowledged for good.
    /// </summary>
    private bool AsksForAcknowledgement => _outstanding.Count > 0 || !_announced || AcknowledgedUpTo < _lastSent;

    /// <summary>
    /// Numbers and stages a message; false when the outstanding window is full (back-pressure: the
    /// caller waits for acknowledgements). Staged messages go out at the next <see cref="Flush"/>.
    /// </summary>
    public bool TryEnqueue(int receiver, ReadOnlySpan<byte> data, out long seq)
    {
        seq = 0;
        if (Outstanding >= _options.MaxOutstanding)
        {
            return false;
        }
        seq = _sequencer.Next();
        _staged.Add((seq, SenderMessageCodec.EncodeSignedRegion(_sender, seq, receiver, data)));
        return true;
    }

    /// <summary>
    /// Takes back the messages an earlier run accepted and kept in its outbox but did not see acknowledged, with
    /// their own numbers and DATA (the replicas and the pre-SQs deduplicate by number, so the copy an earlier run may
    /// already have sent is dropped as a replay; the signature may differ, the vote at the receivers is on the DATA
    /// digest). Signs and sends them at once, so that no ACKREQ declares their numbers abandoned. New messages are
    /// held (staged, not sent) until these are acknowledged: the numbers between the last restored one and this run's
    /// first are settled only by an ACKREQ whose lowestPending is above the restored ones, and until then new messages
    /// would only crowd the replicas' reorder buffer. Call before any <see cref="TryEnqueue"/>.
    /// </summary>
    /// <param name="messages">In increasing number order, all below this run's first number.</param>
    public IReadOnlyList<OutgoingFrame> Restore(IReadOnlyList<(long Seq, int Receiver, byte[] Data)> messages, long nowMs)
    {
        ArgumentNullException.ThrowIfNull(messages);
        if (_staged.Count > 0 || _outstanding.Count > 0)
        {
            throw new InvalidOperationException("restore before any message of this run");
        }
        var previous = 0L;
        foreach (var (seq, receiver, data) in messages)
        {
            if (seq <= previous || seq >= _sequencer.Peek)
            {
                throw new ArgumentException($"restored message {seq} is out of order or not below this run's first number {_sequencer.Peek}", nameof(messages));
            }
            previous = seq;
            _staged.Add((seq, SenderMessageCodec.EncodeSignedRegion(_sender, seq, receiver, data)));
        }
        var frames = Flush(nowMs);
        _restoredUpTo = previous;
        return frames;
    }

    /// <summary>Signs what is staged (in Merkle batches of up to MaxBatch) and frames it for the assigned pre-SQ.</summary>
    public IReadOnlyList<OutgoingFrame> Flush(long nowMs)
    {
        if (AcknowledgedUpTo < _restoredUpTo)
        {
            return [];
        }
        var frames = new List<OutgoingFrame>(_staged.Count);
        var ring = RingFor(AssignedPreSq);
        for (var at = 0; at < _staged.Count; at += _options.MaxBatch)
        {
            var group = _staged.GetRange(at, Math.Min(_options.MaxBatch, _staged.Count - at));
            var signed = BatchSigner.Sign(_sender, group.Select(g => g.Region).ToList(), _key);
            RootsSigned++;
            for (var i = 0; i < signed.Length; i++)
            {
                _outstanding.Add(group[i].Seq, signed[i], AssignedPreSq, nowMs + _rto.CurrentMs, nowMs, _moves);
                frames.Add(new OutgoingFrame(AssignedPreSq, SenderFrameCodec.Encode(AssignedPreSq, signed[i], ring)));
                _lastSent = Math.Max(_lastSent, group[i].Seq);
            }
        }
        _staged.Clear();
        return frames;
    }

    /// <summary>
    /// Retransmissions that are due (each through another pre-SQ than last time) and the ACKREQ if due.
    /// While acknowledgements still move forward within one time-out, nothing is lost yet, only queued:
    /// due messages wait for one more time-out instead of going out again (TCP restarts its timer on
    /// every new acknowledgement for the same reason). A time-out without progress sends the lowest due
    /// messages again, at most a budget of them, and backs the time-out off: the budget doubles after a
    /// round that made progress and falls back after one that did not, so a lost window is recovered in
    /// a few rounds while a merely slow sieve is not flooded with a whole window of copies per period.
    /// </summary>
    public IReadOnlyList<OutgoingFrame> Tick(long nowMs)
    {
        var frames = new List<OutgoingFrame>();
        var due = _outstanding.Due(nowMs);
        if (due.Count > 0)
        {
            var rto = _rto.CurrentMs;
            var holdUntil = _progressAt != long.MinValue && nowMs - _progressAt < rto ? _progressAt + rto
                : nowMs < _nextRoundAt ? _nextRoundAt
                : (long?)null;
            if (holdUntil is { } until)
            {
                // Progress, or a round went out less than one backed-off time-out ago: entries that came
                // due since (they were sent at other times) join the next round rather than start their own.
                foreach (var (seq, e) in due)
                {
                    _outstanding.Reschedule(seq, e, until);
                }
            }
            else
            {
                _retransmitBudget = _progressSinceTimeout
                    ? Math.Min(_options.MaxOutstanding, _retransmitBudget * 2)
                    : Math.Max(1, _options.MaxBatch);
                _progressSinceTimeout = false;
                _backoff = Math.Min(_backoff + 1, 16);
                var wait = Math.Min(_options.MaxRetransmitAfterMs, rto << _backoff);
                _nextRoundAt = nowMs + wait;
                due.Sort((a, b) => a.Seq.CompareTo(b.Seq));
                for (var i = 0; i < due.Count; i++)
                {
                    var (seq, e) = due[i];
                    _outstanding.Reschedule(seq, e, nowMs + wait);
                    if (i >= _retransmitBudget)
                    {
                        continue;
                    }
                    // Sent before the replicas moved this sender, it goes through the pre-SQ they chose: rotating from
                    // where it last went, a copy first retransmitted through the new pre-SQ went back to the one the sender
                    // was moved off, which under dropping-presq dropped it once more (docs/attacks.md).
                    var target = e.SentAtMove != _moves ? AssignedPreSq : NextPreSq(e.PreSq);
                    e.PreSq = target;
                    e.SentAtMove = _moves;
                    e.Attempts++;
                    frames.Add(new OutgoingFrame(target, SenderFrameCodec.Encode(target, e.Message, RingFor(target))));
                    Retransmissions++;
                }
            }
        }
        if (AsksForAcknowledgement && nowMs >= _nextAckAt)
        {
            frames.Add(AckRequestFrame(nowMs));
        }
        return frames;
    }

    /// <summary>
    /// The sender stops: the unused rest of its reserved block of numbers is given back, so the next run on the same
    /// sequence store continues one number above the last used instead of past the whole block.
    /// </summary>
    public void ReleaseUnusedNumbers() => _sequencer.ReleaseUnused();

    /// <summary>Takes an ACKRES relayed by a pre-SQ: MAC per replica, then the f+1 tallies.</summary>
    public AckResponseOutcome OnAckResponse(ReadOnlySpan<byte> bytes, long nowMs)
    {
        AckResponse r;
        try
        {
            r = AckResponseCodec.Decode(bytes);
        }
        catch (MalformedEnvelopeException)
        {
            _drops.Count(SieveStage.Parse, DropReason.Malformed);
            return Rejected();
        }
        if (r.Sender != _sender || r.Replica >= _tally.ReplicaCount || !_issuedNonces.Contains(r.Nonce))
        {
            _drops.Count(SieveStage.Parse, DropReason.WrongDestination);
            return Rejected();
        }
        var ring = _replicaRing(r.Replica);
        if (ring is null || !AckResponseCodec.VerifyMac(bytes, ring))
        {
            _drops.Count(SieveStage.Mac, DropReason.BadMac);
            return Rejected();
        }
        var agreed = _tally.Add(r);
        var reassigned = false;
        if (agreed is { } a)
        {
            if (r.Nonce == _lastNonce && !_lastAnswered)
            {
                _lastAnswered = true;
                _ackWait = _options.AckResponseWaitMs;
                _nextAckAt = _lastAckSentAt + _options.AckRequestIntervalMs;
            }
            if (a.AssignedPreSq != AssignedPreSq && Array.BinarySearch(_preSqs, a.AssignedPreSq) >= 0)
            {
                AssignedPreSq = a.AssignedPreSq;
                _moves++;
                reassigned = true;
            }
        }
        var acked = Math.Min(_tally.AcknowledgedUpTo, _lastSent);
        AcknowledgedVerdicts? newly = null;
        if (acked > AcknowledgedUpTo)
        {
            var statement = _tally.Agreed!;
            newly = new AcknowledgedVerdicts(AcknowledgedUpTo + 1, acked, statement.VerdictsFrom,
                statement.Rejections.Where(j => j.Seq > AcknowledgedUpTo && j.Seq <= acked).ToList());
            // Karn's rule over the whole acknowledged stretch: a message sent once but held at the replicas behind
            // one that had to be retransmitted is acknowledged only after that retransmission, so its delay measures
            // the time-out, not the sieve. Sampled, it kept the time-out at its maximum (8 s) for good after one
            // burst of loss, and the sender recovered every later gap only every 8 s (docs/attacks.md).
            if (_outstanding.TryGet(acked, out var newest) && newest.Attempts == 1 && !_outstanding.AnyRetransmittedUpTo(acked))
            {
                _rto.Sample(nowMs - newest.FirstSentAt);
            }
            _progressAt = nowMs;
            _progressSinceTimeout = true;
            _backoff = 0;
            AcknowledgedUpTo = acked;
            _outstanding.AcknowledgeUpTo(acked);
        }
        return new AckResponseOutcome(true, AcknowledgedUpTo, AssignedPreSq, reassigned, agreed?.LossPpm, newly);
    }

    private OutgoingFrame AckRequestFrame(long nowMs)
    {
        var retry = !_lastAnswered;
        var target = retry ? NextPreSq(_lastAckTarget) : AssignedPreSq;
        _ackWait = retry ? Math.Min(_ackWait * 2, _options.MaxAckResponseWaitMs) : _options.AckResponseWaitMs;
        var nonce = NextNonce();
        var lowest = Math.Min(_outstanding.LowestSeq ?? long.MaxValue, _lastSent + 1);
        var body = AckRequestCodec.Encode(_sender, _lastSent, lowest, nonce, _key);
        _lastNonce = nonce;
        _lastAnswered = false;
        _lastAckTarget = target;
        _lastAckSentAt = nowMs;
        _nextAckAt = nowMs + _ackWait;
        _announced = true;
        _issuedNonces.Enqueue(nonce);
        while (_issuedNonces.Count > 64)
        {
            _issuedNonces.Dequeue();
        }
        _tally.ForgetBelow(_issuedNonces.Peek());
        return new OutgoingFrame(target, SenderFrameCodec.Encode(target, body, RingFor(target)));
    }

    private long NextNonce()
    {
        var b = _sequencer.Peek;
        if (b != _nonceBase)
        {
            _nonceBase = b;
            _nonceCounter = 0;
        }
        var counter = Math.Min(_nonceCounter++, (1L << NonceCounterBits) - 1);
        return Math.Max(_lastNonce + 1, (b << NonceCounterBits) | counter);
    }

    private int NextPreSq(int current)
    {
        var i = Array.BinarySearch(_preSqs, current);
        return _preSqs[(i < 0 ? ~i : i + 1) % _preSqs.Length];
    }

    private MacKeyRing RingFor(int preSq) =>
        _preSqRing(preSq) ?? throw new InvalidOperationException($"no MAC key for pre-SQ {preSq}");

    private AckResponseOutcome Rejected() => new(false, AcknowledgedUpTo, AssignedPreSq, false, null);
}
