namespace SieveQ.Transport.Reconnect;

/// <summary>
/// How far one back-off wait strays from its nominal interval: the wait is the interval times a factor
/// drawn uniformly from [<see cref="Low"/>, <see cref="High"/>). Jitter keeps clients that lost the same
/// server at the same instant from all coming back at the same instant.
/// </summary>
public readonly record struct BackoffJitter
{
    public BackoffJitter(double low, double high)
    {
        if (!(low > 0) || !(high >= low) || double.IsInfinity(high))
        {
            throw new ArgumentOutOfRangeException(nameof(low), $"jitter factors [{low}, {high}) must be positive and ordered");
        }
        Low = low;
        High = high;
    }

    /// <summary>The nominal interval exactly (links between a few known peers, where lockstep costs nothing).</summary>
    public static BackoffJitter None { get; } = new(1, 1);

    /// <summary>Up to <paramref name="fraction"/> of the interval shorter or longer.</summary>
    public static BackoffJitter Around(double fraction) => new(1 - fraction, 1 + fraction);

    public double Low { get; }

    public double High { get; }

    /// <summary>The wait for <paramref name="nominal"/>, <paramref name="unit"/> being a uniform draw from [0, 1).</summary>
    public TimeSpan Apply(TimeSpan nominal, double unit) => TimeSpan.FromTicks((long)(nominal.Ticks * (Low + (High - Low) * unit)));
}
