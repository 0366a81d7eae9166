using SieveQ.Transport.Reconnect;

namespace SieveQ.Transport.Tests;

public class ReconnectBackoffTests
{
    private static readonly TimeSpan Ms100 = TimeSpan.FromMilliseconds(100);

    [Fact]
    public void Waits_double_from_the_initial_one_up_to_the_cap_and_stay_there()
    {
        var backoff = new ReconnectBackoff(Ms100, TimeSpan.FromMilliseconds(1_000), BackoffJitter.None);
        var waits = Enumerable.Range(0, 7).Select(_ => backoff.NextDelay().TotalMilliseconds).ToArray();
        Assert.Equal([100, 200, 400, 800, 1_000, 1_000, 1_000], waits);
        Assert.Equal(7, backoff.Failures);
    }

    [Fact]
    public void Reset_starts_over_at_the_initial_wait()
    {
        var backoff = new ReconnectBackoff(Ms100, TimeSpan.FromSeconds(5), BackoffJitter.None);
        backoff.NextDelay();
        backoff.NextDelay();
        backoff.NextDelay();
        backoff.Reset();
        Assert.Equal(0, backoff.Failures);
        Assert.Equal(Ms100, backoff.NextDelay());
        Assert.Equal(TimeSpan.FromMilliseconds(200), backoff.NextDelay());
    }

    [Fact]
    public void A_cap_that_is_no_power_of_two_of_the_initial_wait_is_reached_exactly()
    {
        var backoff = new ReconnectBackoff(TimeSpan.FromMilliseconds(50), TimeSpan.FromMilliseconds(2_000), BackoffJitter.None);
        var waits = Enumerable.Range(0, 8).Select(_ => backoff.NextDelay().TotalMilliseconds).ToArray();
        Assert.Equal([50, 100, 200, 400, 800, 1_600, 2_000, 2_000], waits);
    }

    [Theory]
    [InlineData(0.0, 75)]
    [InlineData(0.5, 100)]
    [InlineData(0.999_999, 125)]
    public void Jitter_around_a_quarter_scales_the_wait_by_three_quarters_to_five_quarters(double draw, double expectedMs)
    {
        var backoff = new ReconnectBackoff(Ms100, TimeSpan.FromSeconds(5), BackoffJitter.Around(0.25), new FixedDraw(draw));
        Assert.Equal(expectedMs, backoff.NextDelay().TotalMilliseconds, 0.01);
    }

    [Fact]
    public void Jittered_waits_stay_within_the_factors_of_the_nominal_wait_and_vary()
    {
        var jitter = new BackoffJitter(0.5, 1.0);
        var backoff = new ReconnectBackoff(Ms100, TimeSpan.FromMilliseconds(400), jitter, new Random(20));
        var nominal = new[] { 100.0, 200, 400, 400, 400 };
        var seen = new HashSet<double>();
        for (var round = 0; round < 200; round++)
        {
            backoff.Reset();
            foreach (var n in nominal)
            {
                var wait = backoff.NextDelay().TotalMilliseconds;
                Assert.InRange(wait, n * jitter.Low, n * jitter.High);
                seen.Add(wait);
            }
        }
        Assert.True(seen.Count > 100, "jitter draws no different waits");
    }

    [Fact]
    public async Task WaitAsync_waits_and_says_so_or_says_stop_when_cancelled()
    {
        var quick = new ReconnectBackoff(TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(1), BackoffJitter.None);
        Assert.True(await quick.WaitAsync(CancellationToken.None));
        Assert.Equal(1, quick.Failures);

        var slow = new ReconnectBackoff(TimeSpan.FromMinutes(10), TimeSpan.FromMinutes(10), BackoffJitter.None);
        using var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(20));
        Assert.False(await slow.WaitAsync(cancel.Token).WaitAsync(TimeSpan.FromSeconds(30)));
    }

    [Fact]
    public void Settings_that_cannot_back_off_are_refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new ReconnectBackoff(TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(1), BackoffJitter.None));
        Assert.Throws<ArgumentOutOfRangeException>(() => new ReconnectBackoff(TimeSpan.FromSeconds(-1), TimeSpan.FromSeconds(1), BackoffJitter.None));
        Assert.Throws<ArgumentOutOfRangeException>(() => new BackoffJitter(0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new BackoffJitter(1.25, 0.75));
    }

    /// <summary>A jitter source that always draws the same number, so a jittered wait is exact.</summary>
    private sealed class FixedDraw(double value) : Random
    {
        public override double NextDouble() => value;
    }
}
