using System.Numerics;

namespace SieveQ.Sdk.Sender;

/// <summary>
/// Latencies of roughly the last minute, for percentiles an operator reads in `sieveq status`: two halves of
/// <see cref="HalfMs"/>, the older dropped as a new one starts, each a log-linear histogram (16 buckets per power of
/// two, so a percentile is within 1/16 of the truth) of fixed size whatever the rate. Thread-safe.
/// </summary>
internal sealed class LatencyWindow
{
    public const long HalfMs = 30_000;

    private const int SubBits = 4;
    private const int Buckets = (64 - SubBits + 1) << SubBits;

    private readonly Lock _lock = new();
    private long[] _current = new long[Buckets];
    private long[] _previous = new long[Buckets];
    private long _currentSince;
    private bool _started;

    public void Record(TimeSpan latency, long nowMs)
    {
        var us = Math.Max(0, (long)latency.TotalMicroseconds);
        lock (_lock)
        {
            Rotate(nowMs);
            _current[Index(us)]++;
        }
    }

    /// <summary>Percentiles of what the window holds at <paramref name="nowMs"/>; zeros when it holds nothing.</summary>
    public LatencyPercentiles Read(long nowMs)
    {
        var merged = new long[Buckets];
        lock (_lock)
        {
            Rotate(nowMs);
            for (var i = 0; i < Buckets; i++)
            {
                merged[i] = _current[i] + _previous[i];
            }
        }
        var count = merged.Sum();
        return count == 0 ? default : new LatencyPercentiles(count, Percentile(merged, count, 0.50), Percentile(merged, count, 0.99));
    }

    private void Rotate(long nowMs)
    {
        if (!_started)
        {
            _started = true;
            _currentSince = nowMs;
            return;
        }
        var halves = (nowMs - _currentSince) / HalfMs;
        if (halves <= 0)
        {
            return;
        }
        (_previous, _current) = (_current, _previous);
        Array.Clear(_current);
        if (halves > 1)
        {
            Array.Clear(_previous);
        }
        _currentSince += halves * HalfMs;
    }

    /// <summary>Values below 16 have a bucket each; above, the top bit picks a group of 16 and the next four bits the bucket.</summary>
    internal static int Index(long us)
    {
        if (us < 1 << SubBits)
        {
            return (int)us;
        }
        var top = 63 - BitOperations.LeadingZeroCount((ulong)us);
        var sub = (int)((us >> (top - SubBits)) & ((1 << SubBits) - 1));
        return ((top - SubBits + 1) << SubBits) + sub;
    }

    /// <summary>The middle of bucket <paramref name="index"/>.</summary>
    internal static long Value(int index)
    {
        if (index < 1 << SubBits)
        {
            return index;
        }
        var group = index >> SubBits;
        var sub = index & ((1 << SubBits) - 1);
        var top = group + SubBits - 1;
        var low = (1L << top) | ((long)sub << (top - SubBits));
        return low + ((1L << (top - SubBits)) / 2);
    }

    private static long Percentile(long[] buckets, long count, double q)
    {
        var rank = (long)Math.Ceiling(q * count);
        long seen = 0;
        for (var i = 0; i < buckets.Length; i++)
        {
            seen += buckets[i];
            if (seen >= rank)
            {
                return Value(i);
            }
        }
        return Value(buckets.Length - 1);
    }
}
