using System.Diagnostics.Metrics;
using SieveQ.Sieve.Envelope;

namespace SieveQ.PreSq;

/// <summary>
/// The pre-SQ's own figures, kept as plain counters (read by Health and tests) and published on the
/// "SieveQ.PreSq" meter as observable instruments over the same values, so nothing is counted twice.
/// The filter's drops by stage and reason are on the "SieveQ.Sieve" meter already.
/// </summary>
public sealed class PreSqMetrics : IDisposable
{
    public const string MeterName = "SieveQ.PreSq";

    private readonly Meter _meter;
    private readonly KeyValuePair<string, object?> _tag;
    private readonly Histogram<double> _orderingLatency;
    private readonly Histogram<int> _batchItems;
    private readonly Dictionary<string, Func<long>> _gauges = [];

    private long _framesReceived;
    private long _framesShed;
    private long _batches;
    private long _batchedItems;
    private long _warnRequests;
    private long _orderingInFlight;
    private long _orderingStalls;
    private long _accepted;
    private long _held;
    private long _dropped;
    private long _badResults;
    private long _receiverAcksQueued;
    private long _receiverAcksBadSignature;
    private long _receiverAcksMalformed;
    private long _receiverAcksShed;
    private long _ackResponsesRelayed;
    private long _ackResponsesQueueFull;
    private long _ackResponsesUnbound;
    private long _ackResponsesMalformed;
    private long _replicaSubscriptions;
    private long _relayReconnects;
    private long _streamsUnboundTimeout;
    private long _bindings;
    private long _ruleSetCommandsOrdered;
    private long _ruleSetCommandsRefused;

    public PreSqMetrics(int preSqId)
    {
        PreSqId = preSqId;
        _tag = new("pre_sq", preSqId);
        _meter = new Meter(MeterName, "1.0");
        Counter("sieveq.presq.frames.received", "{frame}", "Sender frames read from Exchange streams", () => FramesReceived);
        Counter("sieveq.presq.frames.shed", "{frame}", "Frames dropped because the event loop's queue was full (ordering back-pressure)", () => FramesShed);
        Counter("sieveq.presq.batches", "{request}", "Ordering requests submitted", () => Batches);
        Counter("sieveq.presq.ordering.reused_numbers", "{request}", "Requests answered under a number the previous run may have used (their messages pass again)", () => ReusedNumbersAnswered);
        Counter("sieveq.presq.ordering.reused_numbers_spent", "{request}", "Request numbers of the previous run's last block spent at start, before any batch", () => ReusedNumbersSpent);
        Counter("sieveq.presq.warn_requests", "{request}", "WARNREQ items added to ordering requests", () => WarnRequests);
        Counter("sieveq.presq.ordering.accepted", "{item}", "Items the replicas accepted", () => Accepted);
        Counter("sieveq.presq.ordering.held", "{item}", "Items the replicas hold in their reorder buffer", () => Held);
        Counter("sieveq.presq.ordering.dropped", "{item}", "Items the replicas dropped", () => Dropped);
        Counter("sieveq.presq.receiver_acks.queued", "{ack}", "Receiver acknowledgements put into ordering", () => ReceiverAcksQueued);
        Counter("sieveq.presq.receiver_acks.refused", "{ack}", "Receiver acknowledgements refused (bad signature, malformed, queue full)",
            () => ReceiverAcksBadSignature + ReceiverAcksMalformed + ReceiverAcksShed);
        Counter("sieveq.presq.ack_responses.relayed", "{ackres}", "ACKRES queued to a sender's stream", () => AckResponsesRelayed);
        Counter("sieveq.presq.ack_responses.dropped", "{ackres}", "ACKRES not relayed (no stream, stream queue full, malformed)",
            () => AckResponsesQueueFull + AckResponsesUnbound + AckResponsesMalformed);
        Counter("sieveq.presq.relay.reconnects", "{connection}", "Replica ACKRES subscriptions re-established", () => RelayReconnects);
        Counter("sieveq.presq.rule_set_commands.ordered", "{command}", "Administrator rule-set commands ordered (the replicas' outcome is in the reply)", () => RuleSetCommandsOrdered);
        Counter("sieveq.presq.rule_set_commands.refused", "{command}", "Rule-set commands refused before ordering (malformed, not signed by the administrator key)", () => RuleSetCommandsRefused);
        _meter.CreateObservableUpDownCounter("sieveq.presq.ordering.in_flight", () => new Measurement<long>(OrderingInFlight, _tag), "{request}", "Ordering requests awaiting f+1 replies");
        _meter.CreateObservableUpDownCounter("sieveq.presq.relay.connected", () => new Measurement<long>(ReplicaSubscriptions, _tag), "{replica}", "Replicas whose ACKRES stream is open");
        _orderingLatency = _meter.CreateHistogram<double>("sieveq.presq.ordering.latency", "ms", "Time from submitting an ordering request to f+1 matching replies");
        _batchItems = _meter.CreateHistogram<int>("sieveq.presq.batch.items", "{item}", "Items per ordering request");
    }

    public int PreSqId { get; }

    public long FramesReceived => Volatile.Read(ref _framesReceived);
    public long FramesShed => Volatile.Read(ref _framesShed);
    public long Batches => Volatile.Read(ref _batches);
    public long BatchedItems => Volatile.Read(ref _batchedItems);
    public long WarnRequests => Volatile.Read(ref _warnRequests);
    public long OrderingInFlight => Volatile.Read(ref _orderingInFlight);
    /// <summary>Times the event loop had to wait for an ordering slot (it stops reading meanwhile).</summary>
    public long OrderingStalls => Volatile.Read(ref _orderingStalls);
    public long Accepted => Volatile.Read(ref _accepted);
    public long Held => Volatile.Read(ref _held);
    public long Dropped => Volatile.Read(ref _dropped);
    public long BadResults => Volatile.Read(ref _badResults);
    public long ReceiverAcksQueued => Volatile.Read(ref _receiverAcksQueued);
    public long ReceiverAcksBadSignature => Volatile.Read(ref _receiverAcksBadSignature);
    public long ReceiverAcksMalformed => Volatile.Read(ref _receiverAcksMalformed);
    public long ReceiverAcksShed => Volatile.Read(ref _receiverAcksShed);
    public long AckResponsesRelayed => Volatile.Read(ref _ackResponsesRelayed);
    public long AckResponsesQueueFull => Volatile.Read(ref _ackResponsesQueueFull);
    public long AckResponsesUnbound => Volatile.Read(ref _ackResponsesUnbound);
    public long AckResponsesMalformed => Volatile.Read(ref _ackResponsesMalformed);
    public long ReplicaSubscriptions => Volatile.Read(ref _replicaSubscriptions);
    public long RelayReconnects => Volatile.Read(ref _relayReconnects);
    public long StreamsUnboundTimeout => Volatile.Read(ref _streamsUnboundTimeout);
    public long Bindings => Volatile.Read(ref _bindings);

    private long _reusedNumbersAnswered;

    /// <summary>Requests numbered inside the previous run's last reservation block (their messages are let through again).</summary>
    public long ReusedNumbersAnswered => Volatile.Read(ref _reusedNumbersAnswered);

    internal void ReusedNumberAnswered() => Interlocked.Increment(ref _reusedNumbersAnswered);

    private long _reusedNumbersSpent;

    /// <summary>Request numbers of the previous run's last block spent at start on queries, before any batch.</summary>
    public long ReusedNumbersSpent => Volatile.Read(ref _reusedNumbersSpent);

    internal void ReusedNumberSpent() => Interlocked.Increment(ref _reusedNumbersSpent);

    internal void FrameReceived() => Interlocked.Increment(ref _framesReceived);
    internal void FrameShed() => Interlocked.Increment(ref _framesShed);
    internal void WarnRequest() => Interlocked.Increment(ref _warnRequests);
    internal void OrderingStall() => Interlocked.Increment(ref _orderingStalls);
    internal void ReceiverAckQueued() => Interlocked.Increment(ref _receiverAcksQueued);
    internal void ReceiverAckBadSignature() => Interlocked.Increment(ref _receiverAcksBadSignature);
    internal void ReceiverAckMalformed() => Interlocked.Increment(ref _receiverAcksMalformed);
    internal void ReceiverAckShed() => Interlocked.Increment(ref _receiverAcksShed);
    internal void AckResponseSubscribered() => Interlocked.Increment(ref _ackResponsesRelayed);
    internal void AckResponseQueueFull() => Interlocked.Increment(ref _ackResponsesQueueFull);
    internal void AckResponseUnbound() => Interlocked.Increment(ref _ackResponsesUnbound);
    internal void AckResponseMalformed() => Interlocked.Increment(ref _ackResponsesMalformed);
    internal void ReplicaSubscriptionUp() => Interlocked.Increment(ref _replicaSubscriptions);
    internal void ReplicaSubscriptionDown() => Interlocked.Decrement(ref _replicaSubscriptions);
    internal void RelayReconnect() => Interlocked.Increment(ref _relayReconnects);
    internal void StreamUnboundTimeout() => Interlocked.Increment(ref _streamsUnboundTimeout);
    internal void Binding() => Interlocked.Increment(ref _bindings);

    internal void BatchSubmitted(int items)
    {
        Interlocked.Increment(ref _batches);
        Interlocked.Add(ref _batchedItems, items);
        Interlocked.Increment(ref _orderingInFlight);
        _batchItems.Record(items, _tag);
    }

    internal void BatchOrdered(ExecuteResult? result, double latencyMs)
    {
        Interlocked.Decrement(ref _orderingInFlight);
        if (result is null)
        {
            Interlocked.Increment(ref _badResults);
            return;
        }
        Interlocked.Add(ref _accepted, result.Accepted);
        Interlocked.Add(ref _held, result.Held);
        Interlocked.Add(ref _dropped, result.Dropped);
        _orderingLatency.Record(latencyMs, _tag);
    }

    internal void BatchAbandoned() => Interlocked.Decrement(ref _orderingInFlight);

    public long RuleSetCommandsOrdered => Volatile.Read(ref _ruleSetCommandsOrdered);
    public long RuleSetCommandsRefused => Volatile.Read(ref _ruleSetCommandsRefused);

    internal void RuleSetCommandOrdered() => Interlocked.Increment(ref _ruleSetCommandsOrdered);

    internal void RuleSetCommandRefused() => Interlocked.Increment(ref _ruleSetCommandsRefused);

    /// <summary>A live value owned by another component (open streams, per-source refusals), on the meter and in Health.</summary>
    internal void Gauge(string name, string unit, string description, Func<long> read)
    {
        lock (_gauges)
        {
            _gauges[name] = read;
        }
        _meter.CreateObservableGauge("sieveq.presq." + name, () => new Measurement<long>(read(), _tag), unit, description);
    }

    /// <summary>Everything above as name -> value, for the Health reply.</summary>
    public Dictionary<string, long> Snapshot()
    {
        var d = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["frames_received"] = FramesReceived,
            ["frames_shed"] = FramesShed,
            ["batches"] = Batches,
            ["ordering_reused_numbers"] = ReusedNumbersAnswered,
            ["ordering_reused_numbers_spent"] = ReusedNumbersSpent,
            ["batched_items"] = BatchedItems,
            ["warn_requests"] = WarnRequests,
            ["ordering_in_flight"] = OrderingInFlight,
            ["ordering_stalls"] = OrderingStalls,
            ["ordering_accepted"] = Accepted,
            ["ordering_held"] = Held,
            ["ordering_dropped"] = Dropped,
            ["ordering_bad_results"] = BadResults,
            ["receiver_acks_queued"] = ReceiverAcksQueued,
            ["receiver_acks_bad_signature"] = ReceiverAcksBadSignature,
            ["receiver_acks_malformed"] = ReceiverAcksMalformed,
            ["receiver_acks_shed"] = ReceiverAcksShed,
            ["ack_responses_relayed"] = AckResponsesRelayed,
            ["ack_responses_queue_full"] = AckResponsesQueueFull,
            ["ack_responses_unbound"] = AckResponsesUnbound,
            ["ack_responses_malformed"] = AckResponsesMalformed,
            ["replica_subscriptions_connected"] = ReplicaSubscriptions,
            ["relay_reconnects"] = RelayReconnects,
            ["streams_unbound_timeout"] = StreamsUnboundTimeout,
            ["stream_bindings"] = Bindings,
            ["rule_set_commands_ordered"] = RuleSetCommandsOrdered,
            ["rule_set_commands_refused"] = RuleSetCommandsRefused,
        };
        lock (_gauges)
        {
            foreach (var (name, read) in _gauges)
            {
                d[name] = read();
            }
        }
        return d;
    }

    private void Counter(string name, string unit, string description, Func<long> read) =>
        _meter.CreateObservableCounter(name, () => new Measurement<long>(read(), _tag), unit, description);

    public void Dispose() => _meter.Dispose();
}
