using SieveQ.Sdk.Sender;

namespace SieveQ.Sdk.Tests;

/// <summary>The sender's verdict-latency window: percentiles within 1/16, fixed size, and only the last minute or so.</summary>
public class LatencyWindowTests
{
    [Fact]
    public void Every_bucket_holds_its_own_middle_and_buckets_grow_with_the_value()
    {
        var last = -1;
        foreach (var us in Enumerable.Range(0, 4_000).Select(i => (long)Math.Pow(1.01, i)).Distinct().Where(v => v < long.MaxValue / 4))
        {
            var i = LatencyWindow.Index(us);
            Assert.True(i >= last, $"bucket of {us} went down");
            last = i;
            var mid = LatencyWindow.Value(i);
            Assert.True(Math.Abs(mid - us) <= Math.Max(1, us / 16), $"{us} reads back as {mid}");
            Assert.Equal(i, LatencyWindow.Index(mid));
        }
    }

    [Fact]
    public void Percentiles_of_a_known_spread()
    {
        var w = new LatencyWindow();
        // 1..1000 ms: the median is 500 ms, the 99th percentile 990 ms.
        for (var ms = 1; ms <= 1000; ms++)
        {
            w.Record(TimeSpan.FromMilliseconds(ms), 1_000);
        }
        var p = w.Read(1_000);
        Assert.Equal(1000, p.Count);
        Assert.InRange(p.P50Us, 500_000 * 15 / 16, 500_000 * 17 / 16);
        Assert.InRange(p.P99Us, 990_000 * 15 / 16, 990_000 * 17 / 16);
    }

    [Fact]
    public void Samples_leave_the_window_after_two_halves()
    {
        var w = new LatencyWindow();
        w.Record(TimeSpan.FromMilliseconds(200), 0);
        Assert.Equal(1, w.Read(LatencyWindow.HalfMs - 1).Count);
        w.Record(TimeSpan.FromMilliseconds(2), LatencyWindow.HalfMs + 10);
        var both = w.Read(LatencyWindow.HalfMs + 10);
        Assert.Equal(2, both.Count);
        Assert.InRange(both.P99Us, 190_000, 210_000);
        // The first half ends: only the recent sample is left, and it sets both percentiles.
        var recent = w.Read((2 * LatencyWindow.HalfMs) + 10);
        Assert.Equal(1, recent.Count);
        Assert.InRange(recent.P99Us, 1_900, 2_100);
        Assert.Equal(default, w.Read(10 * LatencyWindow.HalfMs));
    }
}
