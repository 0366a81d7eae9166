using System.Diagnostics.Metrics;

namespace SieveQ.Policy;

public static class PolicyMetrics
{
    public const string MeterName = "SieveQ.Policy";
    /// <summary>Tag carrying the source's name, so an alarm says which host file or key is broken.</summary>
    public const string SourceTag = "sieveq.policy.source";

    private static readonly Meter Meter = new(MeterName);

    public static readonly Counter<long> Applied = Meter.CreateCounter<long>("sieveq.policy.applied", description: "Policies validated and put in force.");
    public static readonly Counter<long> Rejected = Meter.CreateCounter<long>("sieveq.policy.rejected", description: "Policy changes refused; the previous policy stayed in force.");
}
