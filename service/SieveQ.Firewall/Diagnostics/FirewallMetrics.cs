using System.Diagnostics.Metrics;

namespace SieveQ.Firewall.Diagnostics;

/// <summary>Counters of the agent's layer-0 side, under the meter "SieveQ.Firewall".</summary>
public static class FirewallMetrics
{
    public const string MeterName = "SieveQ.Firewall";
    private static readonly Meter Meter = new(MeterName);

    public static readonly Counter<long> PolicyPushes = Meter.CreateCounter<long>("sieveq.fw.policy_pushes");
    public static readonly Counter<long> Events = Meter.CreateCounter<long>("sieveq.fw.events");
    public static readonly Counter<long> LevelSwitches = Meter.CreateCounter<long>("sieveq.fw.level_switches");
    public static readonly Counter<long> ImagesHashed = Meter.CreateCounter<long>("sieveq.fw.images_hashed");
    public static readonly Counter<long> Attestations = Meter.CreateCounter<long>("sieveq.fw.attestations");
    /// <summary>Requests to store or remove the boot-time filters, tagged enabled and outcome (a BootFilterFailure name).</summary>
    public static readonly Counter<long> BootFilterChanges = Meter.CreateCounter<long>("sieveq.fw.boot_filter_changes");
    public static readonly Histogram<double> LoadIndex = Meter.CreateHistogram<double>("sieveq.fw.load_index");
}
