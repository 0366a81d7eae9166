namespace SieveQ.Firewall.QGuard;

/// <summary>One observation of the host: CPU busy fraction (0..1), queue lengths, accepted connections/s.</summary>
public readonly record struct LoadSample(double CpuFraction, double QueueLength, double AcceptedPerSecond);

public interface ILoadSampler
{
    ValueTask<LoadSample> SampleAsync(CancellationToken cancellationToken);
}

/// <summary>Thresholds at which each indicator alone means "overloaded" (QGuard's overload conditions).</summary>
public sealed record QGuardSettings
{
    public double CpuOverload { get; init; } = 0.90;
    public double QueueOverload { get; init; } = 200;
    public double AcceptedCapacity { get; init; } = 1000;
    public double CpuWeight { get; init; } = 1;
    public double QueueWeight { get; init; } = 1;
    public double AcceptedWeight { get; init; } = 1;
    /// <summary>EWMA weight of a new sample.</summary>
    public double Smoothing { get; init; } = 0.3;
    /// <summary>Load index above which the hierarchy gets one level more restrictive.</summary>
    public double RaiseAbove { get; init; } = 1.0;
    /// <summary>Load index below which it relaxes one level; the gap is the hysteresis.</summary>
    public double LowerBelow { get; init; } = 0.7;
    /// <summary>Minimum time between two switches, so a switch can take effect before the next.</summary>
    public TimeSpan Hold { get; init; } = TimeSpan.FromSeconds(2);
    public TimeSpan Interval { get; init; } = TimeSpan.FromMilliseconds(250);
}
