namespace SieveQ.Attacks;

/// <summary>Deliveries per second and latency percentiles over a window of the run.</summary>
internal readonly record struct WindowFigures(double PerSecond, double P50Ms, double P99Ms);

/// <summary>What one attack of a run measured, over its own windows: the quiet time before it, its window, the quiet time after it.</summary>
internal sealed record AttackWindowFigures(
    AttackKind Kind,
    string Description,
    string Countermeasure,
    int BeforeFrom,
    int From,
    int To,
    int AfterTo,
    long Applied,
    IReadOnlyDictionary<string, long> CountermeasureCounts,
    WindowFigures Before,
    WindowFigures During,
    WindowFigures After,
    string? Watched)
{
    public double ThroughputRatio => During.PerSecond / Before.PerSecond;

    public double P99Ratio => During.P99Ms / Before.P99Ms;

    /// <summary>The watched component's largest RSS in each of this attack's windows (MiB; NaN when none was read).</summary>
    public (double Before, double During, double After) RssWindows(IReadOnlyList<SecondFigures> seconds)
    {
        double Max(int from, int to) => Watched is null
            ? double.NaN
            : seconds.Where(x => x.Second >= from && x.Second < to && x.RssMiB is not null && x.RssMiB.ContainsKey(Watched))
                .Select(x => x.RssMiB![Watched]).DefaultIfEmpty(double.NaN).Max();
        return (Max(BeforeFrom, From), Max(From, To), Max(To, AfterTo));
    }
}

/// <summary>What one run measured: each second, each legitimate sender's verdict, and each attack's own figures.</summary>
internal sealed record AttackFigures(
    AttackSettings Settings,
    IReadOnlyList<SecondFigures> Seconds,
    IReadOnlyDictionary<int, (long Sent, long Delivered)> PerSender,
    long Violations,
    IReadOnlyList<string> FirstViolations,
    long AttackerMessagesDelivered,
    IReadOnlyList<AttackWindowFigures> Attacks)
{
    public long Lost => PerSender.Values.Sum(v => Math.Max(0, v.Sent - v.Delivered));

    public bool ExactlyOnce => Lost == 0 && Violations == 0;

    /// <summary>The processes whose memory the run followed, once each.</summary>
    public IReadOnlyList<string> Watched => [.. Attacks.Select(a => a.Watched).OfType<string>().Distinct(StringComparer.Ordinal)];

    public string Name => string.Join(",", Attacks.Select(a => AttackKinds.Name(a.Kind)));
}
