namespace SieveQ.Firewall.QGuard;

/// <summary>
/// QGuard's load controller as a pure state machine: moving averages of the indicators, an
/// amalgamated load index, and level switches with hysteresis and a hold time. Time is passed in.
/// </summary>
public sealed class QGuardController
{
    private readonly QGuardSettings settings;
    private readonly int levelCount;
    private double cpu, queue, accepted;
    private bool primed;
    private TimeSpan lastSwitch = TimeSpan.MinValue;

    public QGuardController(QGuardSettings settings, int levelCount, int initialLevel = 0)
    {
        ArgumentNullException.ThrowIfNull(settings);
        if (levelCount < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(levelCount));
        }
        if (settings.LowerBelow >= settings.RaiseAbove)
        {
            throw new ArgumentException("LowerBelow must be under RaiseAbove, or levels would flap", nameof(settings));
        }
        this.settings = settings;
        this.levelCount = levelCount;
        Level = Math.Clamp(initialLevel, 0, levelCount - 1);
    }

    public int Level { get; private set; }
    public double LoadIndex { get; private set; }

    /// <summary>Feeds one sample; returns the new level when it changed.</summary>
    public int? Observe(LoadSample sample, TimeSpan now)
    {
        double a = settings.Smoothing;
        if (!primed)
        {
            (cpu, queue, accepted, primed) = (sample.CpuFraction, sample.QueueLength, sample.AcceptedPerSecond, true);
        }
        else
        {
            cpu += a * (sample.CpuFraction - cpu);
            queue += a * (sample.QueueLength - queue);
            accepted += a * (sample.AcceptedPerSecond - accepted);
        }
        double wsum = settings.CpuWeight + settings.QueueWeight + settings.AcceptedWeight;
        // Each indicator as a fraction of its overload point; the index is their weighted mean,
        // except that any single indicator past overload counts fully (max), as in QGuard.
        double c = cpu / settings.CpuOverload, q = queue / settings.QueueOverload, r = accepted / settings.AcceptedCapacity;
        double mean = (settings.CpuWeight * c + settings.QueueWeight * q + settings.AcceptedWeight * r) / wsum;
        LoadIndex = Math.Max(mean, Math.Max(c, Math.Max(q, r)));

        if (lastSwitch != TimeSpan.MinValue && now - lastSwitch < settings.Hold)
        {
            return null;
        }
        int next = Level;
        if (LoadIndex > settings.RaiseAbove && Level < levelCount - 1)
        {
            next = Level + 1;
        }
        else if (LoadIndex < settings.LowerBelow && Level > 0)
        {
            next = Level - 1;
        }
        if (next == Level)
        {
            return null;
        }
        Level = next;
        lastSwitch = now;
        return next;
    }
}
