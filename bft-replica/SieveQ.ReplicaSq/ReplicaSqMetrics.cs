using System.Diagnostics.Metrics;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>Why the replica-SQ's own plumbing (not the sieve) let something go; each is counted.</summary>
public enum OutputDropReason
{
    /// <summary>The pump was behind: a drained outbox was discarded on the core thread (its items stay queued and are re-sent).</summary>
    OutboxQueueFull,

    /// <summary>A receiver read too slowly: its subscription was ended (it resubscribes and gets the pending items again).</summary>
    SlowSubscriber,

    /// <summary>A pre-SQ was not reading: its oldest ACKRES was discarded (the sender repeats its ACKREQ).</summary>
    AckResponseQueueFull,

    /// <summary>An ACKRES via a pre-SQ or for a sender this replica shares no keys with.</summary>
    AckResponseUnroutable,

    /// <summary>A batch for a receiver this replica shares no MAC key with.</summary>
    UnknownReceiver,
}

/// <summary>
/// The replica-SQ's figures as plain counters (read by Health and tests), published on the
/// "SieveQ.ReplicaSq" meter as observable instruments over the same values, so nothing is counted twice.
/// The sieve's drops by stage and reason are on the "SieveQ.Sieve" meter already.
/// </summary>
public sealed class ReplicaSqMetrics : IDisposable
{
    public const string MeterName = "SieveQ.ReplicaSq";

    private static readonly OutputDropReason[] DropReasons = Enum.GetValues<OutputDropReason>();
    private static readonly ControllerAction[] Actions = Enum.GetValues<ControllerAction>();

    private readonly Meter _meter;
    private readonly KeyValuePair<string, object?> _tag;
    private readonly long[] _drops = new long[DropReasons.Length];
    private readonly long[] _notices = new long[Actions.Length];
    private long _liveFrames;
    private long _retransmitFrames;
    private long _retransmittedItems;
    private long _outputBytes;
    private long _ackResponses;
    private long _receiverSubscriptions;
    private long _preSqSubscriptions;
    private long _refusedSubscriptions;
    private long _replayedSubscriptions;
    private long _replacedSubscriptions;
    private long _bodyFetchesAnswered;
    private long _bodyFetchesRefused;
    private long _enrolmentLookups;
    private Func<long> _liveReceiverSubscriptions = () => 0;
    private Func<long> _livePreSqSubscriptions = () => 0;

    public ReplicaSqMetrics(int replica)
    {
        _tag = new("replica", replica);
        _meter = new Meter(MeterName, "1.0");
        Counter("sieveq.replicasq.outputs.sent", "{frame}", "Replica output frames written to receivers (live batches and retransmissions)", () => LiveFrames + RetransmitFrames);
        Counter("sieveq.replicasq.outputs.retransmitted", "{frame}", "Replica output frames re-sending unacknowledged items", () => RetransmitFrames);
        Counter("sieveq.replicasq.outputs.bytes", "By", "Bytes of replica output frames queued to receivers", () => OutputBytes);
        Counter("sieveq.replicasq.ack_responses.sent", "{ackres}", "ACKRES queued to pre-SQ relays", () => AckResponses);
        Counter("sieveq.replicasq.subscriptions.opened", "{subscription}", "Valid subscriptions (receivers and pre-SQs)", () => ReceiverSubscriptions + PreSqSubscriptions);
        Counter("sieveq.replicasq.subscriptions.refused", "{subscription}", "Subscriptions refused (signature, addressee, freshness, format, replay)", () => RefusedSubscriptions);
        Counter("sieveq.replicasq.subscriptions.replayed", "{subscription}", "Subscriptions refused as replays of one already accepted", () => ReplayedSubscriptions);
        Counter("sieveq.replicasq.body_fetches", "{request}", "Body fetches answered", () => BodyFetchesAnswered);
        Counter("sieveq.replicasq.enrolment_lookups", "{request}", "Enrolment lookups answered (clients checking their enrolment before they start)", () => EnrolmentLookups);
        _meter.CreateObservableCounter("sieveq.replicasq.drops", DropMeasurements, "{item}", "Outputs the replica-SQ's plumbing let go, by reason");
        _meter.CreateObservableCounter("sieveq.replicasq.controller_notices", NoticeMeasurements, "{notice}", "Controller notices produced by agreed execution, by action");
        _meter.CreateObservableCounter("sieveq.replicasq.controller_notices.reported", () => Enum.GetValues<NoticeReport>()
            .Select(r => new Measurement<long>(Reported(r), _tag, new("outcome", r.ToString()))), "{notice}",
            "Controller notices reported to the controller, by outcome (taken, refused by it, dropped: queue full or it did not answer)");
        _meter.CreateObservableUpDownCounter("sieveq.replicasq.subscriptions.live", () => new[]
        {
            new Measurement<long>(_liveReceiverSubscriptions(), _tag, new("kind", "receiver")),
            new Measurement<long>(_livePreSqSubscriptions(), _tag, new("kind", "pre_sq")),
        }, "{subscription}", "Open subscription streams");
    }

    public long LiveFrames => Volatile.Read(ref _liveFrames);
    public long RetransmitFrames => Volatile.Read(ref _retransmitFrames);
    public long RetransmittedItems => Volatile.Read(ref _retransmittedItems);
    public long OutputBytes => Volatile.Read(ref _outputBytes);
    public long AckResponses => Volatile.Read(ref _ackResponses);
    public long ReceiverSubscriptions => Volatile.Read(ref _receiverSubscriptions);
    public long PreSqSubscriptions => Volatile.Read(ref _preSqSubscriptions);
    public long RefusedSubscriptions => Volatile.Read(ref _refusedSubscriptions);
    public long ReplayedSubscriptions => Volatile.Read(ref _replayedSubscriptions);
    public long ReplacedSubscriptions => Volatile.Read(ref _replacedSubscriptions);
    public long BodyFetchesAnswered => Volatile.Read(ref _bodyFetchesAnswered);
    public long BodyFetchesRefused => Volatile.Read(ref _bodyFetchesRefused);
    public long EnrolmentLookups => Volatile.Read(ref _enrolmentLookups);

    public long Dropped(OutputDropReason reason) => Volatile.Read(ref _drops[(int)reason]);

    public long Notices(ControllerAction action) => Volatile.Read(ref _notices[(int)action]);

    /// <summary>The signature verdict cache's bound and effect: entries and item bytes held, hits and misses at execution.</summary>
    internal void ObserveVerdictCache(SignatureVerdictCache cache)
    {
        _meter.CreateObservableUpDownCounter("sieveq.replicasq.verdict_cache.entries", () => new Measurement<long>(cache.Count, _tag), "{item}", "Signature verdicts held for execution");
        _meter.CreateObservableUpDownCounter("sieveq.replicasq.verdict_cache.bytes", () => new Measurement<long>(cache.Bytes, _tag), "By", "Item bytes the verdict cache holds as keys");
        _meter.CreateObservableCounter("sieveq.replicasq.verdict_cache.lookups", () => new[]
        {
            new Measurement<long>(cache.Hits, _tag, new("result", "hit")),
            new Measurement<long>(cache.Misses, _tag, new("result", "miss")),
        }, "{item}", "Verdicts looked up at execution");
    }

    /// <summary>Wired once the parts that know the live subscriptions exist.</summary>
    internal void ObserveLive(Func<long> receivers, Func<long> preSqs)
    {
        _liveReceiverSubscriptions = receivers;
        _livePreSqSubscriptions = preSqs;
    }

    internal void FrameQueued(bool retransmission, int bytes, int items)
    {
        Interlocked.Increment(ref retransmission ? ref _retransmitFrames : ref _liveFrames);
        Interlocked.Add(ref _outputBytes, bytes);
        if (retransmission)
        {
            Interlocked.Add(ref _retransmittedItems, items);
        }
    }

    internal void AckResponseQueued() => Interlocked.Increment(ref _ackResponses);

    internal void SubscriptionOpened(bool receiver) => Interlocked.Increment(ref receiver ? ref _receiverSubscriptions : ref _preSqSubscriptions);

    internal void SubscriptionRefused() => Interlocked.Increment(ref _refusedSubscriptions);
    internal void SubscriptionReplayed() => Interlocked.Increment(ref _replayedSubscriptions);

    internal void SubscriptionReplaced() => Interlocked.Increment(ref _replacedSubscriptions);

    internal void EnrolmentLookup() => Interlocked.Increment(ref _enrolmentLookups);

    internal void BodyFetch(bool answered) => Interlocked.Increment(ref answered ? ref _bodyFetchesAnswered : ref _bodyFetchesRefused);

    internal void Drop(OutputDropReason reason, long n = 1) => Interlocked.Add(ref _drops[(int)reason], n);

    internal void Notice(ControllerAction action) => Interlocked.Increment(ref _notices[(int)action]);

    private readonly long[] _reported = new long[Enum.GetValues<NoticeReport>().Length];

    public long Reported(NoticeReport outcome) => Volatile.Read(ref _reported[(int)outcome]);

    internal void NoticeReported(NoticeReport outcome) => Interlocked.Increment(ref _reported[(int)outcome]);

    /// <summary>Everything above by name, for the Health reply.</summary>
    public Dictionary<string, long> Snapshot()
    {
        var s = new Dictionary<string, long>
        {
            ["outputs.live"] = LiveFrames,
            ["outputs.retransmitted"] = RetransmitFrames,
            ["outputs.retransmitted_items"] = RetransmittedItems,
            ["outputs.bytes"] = OutputBytes,
            ["ack_responses.sent"] = AckResponses,
            ["subscriptions.receiver.opened"] = ReceiverSubscriptions,
            ["subscriptions.pre_sq.opened"] = PreSqSubscriptions,
            ["subscriptions.refused"] = RefusedSubscriptions,
            ["subscriptions.replayed"] = ReplayedSubscriptions,
            ["subscriptions.replaced"] = ReplacedSubscriptions,
            ["subscriptions.receiver.live"] = _liveReceiverSubscriptions(),
            ["subscriptions.pre_sq.live"] = _livePreSqSubscriptions(),
            ["body_fetches.answered"] = BodyFetchesAnswered,
            ["body_fetches.refused"] = BodyFetchesRefused,
        };
        foreach (var r in DropReasons)
        {
            s[$"output_drop.{r}"] = Dropped(r);
        }
        foreach (var a in Actions)
        {
            s[$"controller_notice.{a}"] = Notices(a);
        }
        foreach (var r in Enum.GetValues<NoticeReport>())
        {
            s[$"controller_notice_report.{r.ToString().ToLowerInvariant()}"] = Reported(r);
        }
        return s;
    }

    private void Counter(string name, string unit, string description, Func<long> value) =>
        _meter.CreateObservableCounter(name, () => new Measurement<long>(value(), _tag), unit, description);

    private IEnumerable<Measurement<long>> DropMeasurements() =>
        DropReasons.Select(r => new Measurement<long>(Dropped(r), _tag, new("reason", r.ToString())));

    private IEnumerable<Measurement<long>> NoticeMeasurements() =>
        Actions.Select(a => new Measurement<long>(Notices(a), _tag, new("action", a.ToString())));

    public void Dispose() => _meter.Dispose();
}
