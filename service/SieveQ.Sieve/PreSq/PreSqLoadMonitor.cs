using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.PreSq;

/// <summary>
/// The pre-SQ's view of its own load (paper 4.4.2): an exponentially weighted moving average of
/// message inter-arrival times. When the average interval comes near the interval at full capacity,
/// it produces a WARNREQ for the replicas (through the ordering, like any other item), at most once
/// per <c>minWarnIntervalMs</c>. Time in microseconds: at tens of thousands of messages per second,
/// milliseconds cannot resolve an interval. Local, so floating point is fine here.
/// </summary>
public sealed class PreSqLoadMonitor
{
    private readonly int _preSq;
    private readonly double _capacityIntervalUs;
    private readonly int _warnAtPermille;
    private readonly long _minWarnIntervalUs;
    private readonly double _alpha;
    private double _ewmaUs = double.NaN;
    private long _lastArrivalUs = long.MinValue;
    private long _lastWarnUs = long.MinValue / 2;

    /// <param name="capacityPerSecond">Messages per second this pre-SQ can take (measured or configured).</param>
    /// <param name="warnAtPermille">Load (thousandths of capacity) from which to warn.</param>
    public PreSqLoadMonitor(int preSq, double capacityPerSecond, int warnAtPermille = 800, long minWarnIntervalMs = 1000, double alpha = 1.0 / 64)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(capacityPerSecond, 0);
        _preSq = preSq;
        _capacityIntervalUs = 1e6 / capacityPerSecond;
        _warnAtPermille = warnAtPermille;
        _minWarnIntervalUs = minWarnIntervalMs * 1000;
        _alpha = alpha;
    }

    /// <summary>Current load in thousandths of capacity (0 before two arrivals).</summary>
    public int LoadPermille => double.IsNaN(_ewmaUs) ? 0 : (int)Math.Min(100_000, _capacityIntervalUs / Math.Max(_ewmaUs, 0.001) * 1000);

    /// <summary>Records an arrival; returns the encoded WARNREQ item when one is due.</summary>
    public byte[]? OnArrival(long nowUs)
    {
        if (_lastArrivalUs != long.MinValue)
        {
            var interval = Math.Max(0, nowUs - _lastArrivalUs);
            _ewmaUs = double.IsNaN(_ewmaUs) ? interval : _ewmaUs + _alpha * (interval - _ewmaUs);
        }
        _lastArrivalUs = nowUs;
        var load = LoadPermille;
        if (load >= _warnAtPermille && nowUs - _lastWarnUs >= _minWarnIntervalUs)
        {
            _lastWarnUs = nowUs;
            return LoadWarningCodec.Encode(new LoadWarning(_preSq, load));
        }
        return null;
    }
}
