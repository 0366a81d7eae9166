namespace SieveQ.Sieve.Filtering;

/// <summary>
/// Per-component drop counts by (stage, reason), readable by hosts for status pages and by tests;
/// every count is also reported to <see cref="SieveMetrics"/>.
/// </summary>
public sealed class DropCounters
{
    private static readonly int Stages = Enum.GetValues<SieveStage>().Length;
    private static readonly int Reasons = Enum.GetValues<DropReason>().Length;

    private readonly string _component;
    private readonly long[] _counts = new long[Stages * Reasons];

    public DropCounters(string component)
    {
        _component = component;
    }

    public long Total => _counts.Sum();

    public long this[SieveStage stage, DropReason reason] => Volatile.Read(ref _counts[(int)stage * Reasons + (int)reason]);

    public long ByReason(DropReason reason)
    {
        long n = 0;
        for (var s = 0; s < Stages; s++)
        {
            n += Volatile.Read(ref _counts[s * Reasons + (int)reason]);
        }
        return n;
    }

    public void Count(SieveStage stage, DropReason reason, long n = 1)
    {
        Interlocked.Add(ref _counts[(int)stage * Reasons + (int)reason], n);
        SieveMetrics.Drop(_component, stage, reason, n);
    }

    /// <summary>Non-zero counts, for status output.</summary>
    public IReadOnlyList<(SieveStage Stage, DropReason Reason, long Count)> NonZero()
    {
        var list = new List<(SieveStage, DropReason, long)>();
        for (var s = 0; s < Stages; s++)
        {
            for (var r = 0; r < Reasons; r++)
            {
                var c = Volatile.Read(ref _counts[s * Reasons + r]);
                if (c != 0)
                {
                    list.Add(((SieveStage)s, (DropReason)r, c));
                }
            }
        }
        return list;
    }
}
