namespace SieveQ.Bft.Hosting.Bench;

/// <summary>Collects per-request latencies (microseconds) from many threads and reports percentiles.</summary>
public sealed class LatencyRecorder
{
    private readonly Lock _lock = new();
    private readonly List<int> _micros = new(1 << 16);

    public void Record(double microseconds)
    {
        lock (_lock)
        {
            _micros.Add((int)Math.Min(int.MaxValue, microseconds));
        }
    }

    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _micros.Count;
            }
        }
    }

    /// <summary>Percentiles in milliseconds, and the samples are cleared when <paramref name="reset"/> is set (for live lines).</summary>
    public LatencySummary Summarize(bool reset = false)
    {
        int[] sorted;
        lock (_lock)
        {
            sorted = [.. _micros];
            if (reset)
            {
                _micros.Clear();
            }
        }
        if (sorted.Length == 0)
        {
            return new LatencySummary(0, 0, 0, 0, 0);
        }
        Array.Sort(sorted);
        double At(double q) => sorted[Math.Min(sorted.Length - 1, (int)(q * sorted.Length))] / 1000.0;
        return new LatencySummary(sorted.Length, At(0.50), At(0.99), sorted.Average() / 1000.0, sorted[^1] / 1000.0);
    }
}

public readonly record struct LatencySummary(int Samples, double P50Ms, double P99Ms, double MeanMs, double MaxMs);
