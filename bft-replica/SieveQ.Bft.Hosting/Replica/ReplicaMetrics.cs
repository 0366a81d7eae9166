using System.Diagnostics.Metrics;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Hosting.Transport;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>
/// Replica instruments (Meter "SieveQ.Bft.Replica"). Counters are updated by the core loop; gauges read
/// the latest <see cref="ReplicaStatus"/> or live queue depths, never the (single-threaded) core itself.
/// </summary>
public sealed class ReplicaMetrics : IDisposable
{
    public const string MeterName = "SieveQ.Bft.Replica";
    private readonly Meter _meter = new(MeterName);
    private readonly Counter<long> _decided;
    private readonly Counter<long> _executed;
    private readonly Histogram<int> _batchSize;

    public ReplicaMetrics(Func<ReplicaStatus> status, Func<int> inboxDepth, Func<long> sendQueueDepth, Func<int> durabilityBacklog, KnownRequestPayloads knownRequests, RequestVerification requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        ArgumentNullException.ThrowIfNull(knownRequests);
        _decided = _meter.CreateCounter<long>("sieveq.bft.decided_instances");
        _executed = _meter.CreateCounter<long>("sieveq.bft.executed_requests");
        _batchSize = _meter.CreateHistogram<int>("sieveq.bft.batch_size", "{request}");
        _meter.CreateObservableGauge("sieveq.bft.regency", () => status().Regency);
        _meter.CreateObservableGauge("sieveq.bft.last_decided", () => status().LastDecided);
        _meter.CreateObservableGauge("sieveq.bft.pending_requests", () => status().PendingRequests);
        _meter.CreateObservableGauge("sieveq.bft.queue.inbox", inboxDepth);
        _meter.CreateObservableGauge("sieveq.bft.queue.send_frames", sendQueueDepth);
        _meter.CreateObservableGauge("sieveq.bft.queue.durability_backlog", durabilityBacklog);
        _meter.CreateObservableGauge("sieveq.bft.known_requests.entries", () => knownRequests.Entries, "{request}", "Payloads received from clients, held for a PROPOSE to share");
        _meter.CreateObservableGauge("sieveq.bft.known_requests.bytes", () => knownRequests.Bytes, "By");
        _meter.CreateObservableCounter("sieveq.bft.known_requests.decodes", () => new[]
        {
            new Measurement<long>(knownRequests.Shared, new KeyValuePair<string, object?>("outcome", "shared")),
            new Measurement<long>(knownRequests.Copied, new KeyValuePair<string, object?>("outcome", "copied")),
        }, "{request}", "PROPOSE requests decoded: sharing a payload already held, or copying");
        _meter.CreateObservableCounter("sieveq.bft.known_requests.aged", () => knownRequests.Aged, "{request}", "Held payloads dropped unshared");
        _meter.CreateObservableCounter("sieveq.bft.requests.refused", () => new[]
        {
            new Measurement<long>(requests.BadProofs, new KeyValuePair<string, object?>("reason", "bad_proof")),
            new Measurement<long>(requests.Refused, new KeyValuePair<string, object?>("reason", "application")),
        }, "{request}", "Distinct requests refused before ordering: not made by the client they name, or refused by the application");
        _meter.CreateObservableCounter("sieveq.bft.core.drops", () =>
            status().CoreCounters.Where(kv => kv.Key.StartsWith("drop.", StringComparison.Ordinal))
                .Select(kv => new Measurement<long>(kv.Value, new KeyValuePair<string, object?>("reason", kv.Key[5..]))));
    }

    public void Decided(int batchSize, int executed)
    {
        _decided.Add(1);
        _executed.Add(executed);
        _batchSize.Record(batchSize);
    }

    public void Dispose() => _meter.Dispose();
}
