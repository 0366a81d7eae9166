using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// The delivery's instruments, on the console's meter, each tagged with the channel (<c>webhook:NAME</c>, <c>mail</c>):
/// notices sent, failed (tries used up or refused for good), dropped (a full queue), retries, and each queue's depth.
/// </summary>
public sealed class AlarmDeliveryMetrics
{
    private readonly ConcurrentDictionary<string, Func<int>> _depths = new(StringComparer.Ordinal);

    public AlarmDeliveryMetrics(IMeterFactory meters)
    {
        ArgumentNullException.ThrowIfNull(meters);
        var meter = meters.Create(ConsoleMetrics.MeterName);
        Sent = meter.CreateCounter<long>("sieveq.console.alarm_notices_sent", description: "Alarm notices a channel delivered, by channel.");
        Failed = meter.CreateCounter<long>("sieveq.console.alarm_notices_failed", description: "Alarm notices given up on (tries used up, or refused by the receiver), by channel.");
        Dropped = meter.CreateCounter<long>("sieveq.console.alarm_notices_dropped", description: "Alarm notices dropped because the channel's queue was full, by channel.");
        Retries = meter.CreateCounter<long>("sieveq.console.alarm_notice_retries", description: "Tries after a failed one, by channel.");
        meter.CreateObservableGauge("sieveq.console.alarm_notice_queue_depth",
            () => _depths.Select(d => new Measurement<int>(d.Value(), new KeyValuePair<string, object?>("channel", d.Key))),
            description: "Alarm notices waiting in each channel's queue.");
    }

    public Counter<long> Sent { get; }
    public Counter<long> Failed { get; }
    public Counter<long> Dropped { get; }
    public Counter<long> Retries { get; }

    internal void Watch(string channel, Func<int> depth) => _depths[channel] = depth;

    internal void Unwatch(string channel) => _depths.TryRemove(channel, out _);
}
