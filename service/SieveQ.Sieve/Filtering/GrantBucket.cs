using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Filtering;

/// <summary>
/// Checks (d) and the grant part of (e): one sender's share of capacity, as a token bucket of
/// messages refilled at <see cref="RatePerSecond"/> up to <see cref="Burst"/>. Time comes in as
/// milliseconds (the pre-SQ's clock, or the replicas' agreed timestamp); all arithmetic is in integer
/// micro-tokens so replicas stay byte-identical. A throttle factor (per mille) lets the replicas shrink
/// a sender's grant when its receiver's queue is full, and let it grow back as the queue drains.
/// </summary>
public sealed class GrantBucket
{
    private const long Micro = 1_000_000;
    private const long MaxElapsedMs = 10_000_000;
    public const int MinScalePermille = 16;

    private long _tokens;
    private long _lastMs;

    public GrantBucket(long ratePerSecond, long burst, long nowMs)
    {
        Adjust(ratePerSecond, burst);
        _tokens = burst * Micro;
        _lastMs = nowMs;
        ScalePermille = 1000;
    }

    public long RatePerSecond { get; private set; }

    public long Burst { get; private set; }

    /// <summary>Current share of the configured rate, in thousandths.</summary>
    public int ScalePermille { get; private set; }

    /// <summary>Whole messages available now (after refilling to <paramref name="nowMs"/>).</summary>
    public long Available(long nowMs)
    {
        Refill(nowMs);
        return _tokens / Micro;
    }

    public bool TryTake(long nowMs, int cost = 1)
    {
        Refill(nowMs);
        var need = cost * Micro;
        if (_tokens < need)
        {
            return false;
        }
        _tokens -= need;
        return true;
    }

    /// <summary>Grants are adjusted dynamically (paper 4.3.2 (d)); the bucket keeps what it holds, capped.</summary>
    public void Adjust(long ratePerSecond, long burst)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(ratePerSecond, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(ratePerSecond, 10_000_000);
        ArgumentOutOfRangeException.ThrowIfLessThan(burst, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(burst, 10_000_000);
        RatePerSecond = ratePerSecond;
        Burst = burst;
        _tokens = Math.Min(_tokens, burst * Micro);
    }

    /// <summary>Back-pressure: halve the effective rate (not below 1/64).</summary>
    public void Throttle() => ScalePermille = Math.Max(MinScalePermille, ScalePermille / 2);

    /// <summary>Recovery: add an eighth of the full rate back.</summary>
    public void Relax() => ScalePermille = Math.Min(1000, ScalePermille + 125);

    public void WriteTo(CanonicalWriter w)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.Seq(RatePerSecond);
        w.Seq(Burst);
        w.Id(ScalePermille);
        w.Seq(_tokens);
        w.I64(_lastMs);
    }

    public static GrantBucket ReadFrom(ref CanonicalReader r)
    {
        var rate = r.Seq("grant rate");
        var burst = r.Seq("grant burst");
        var scale = r.Id("grant scale");
        var tokens = r.Seq("grant tokens");
        var last = r.I64("grant time");
        if (rate is < 1 or > 10_000_000 || burst is < 1 or > 10_000_000 || scale is < MinScalePermille or > 1000 || tokens > burst * Micro)
        {
            throw new MalformedEnvelopeException("grant bucket fields out of range");
        }
        return new GrantBucket(rate, burst, last) { ScalePermille = scale, _tokens = tokens };
    }

    private void Refill(long nowMs)
    {
        // Time that runs backwards (a pre-SQ's clock being set) refills nothing and is not remembered.
        if (nowMs <= _lastMs)
        {
            return;
        }
        var elapsed = Math.Min(nowMs - _lastMs, MaxElapsedMs);
        // micro-tokens per ms = rate * 1000; scaled by permille/1000: elapsed * rate * scale.
        _tokens = Math.Min(Burst * Micro, _tokens + elapsed * RatePerSecond * ScalePermille);
        _lastMs = nowMs;
    }
}
