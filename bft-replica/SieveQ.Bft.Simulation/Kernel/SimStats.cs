namespace SieveQ.Bft.Simulation.Kernel;

/// <summary>Named counters of one run: network drops, host-level rejections, Byzantine actions.</summary>
public sealed class SimStats
{
    private readonly SortedDictionary<string, long> _counts = new(StringComparer.Ordinal);

    public void Count(string name, long by = 1)
    {
        _counts.TryGetValue(name, out var v);
        _counts[name] = v + by;
    }

    public long this[string name] => _counts.TryGetValue(name, out var v) ? v : 0;

    public IReadOnlyDictionary<string, long> Snapshot() => new SortedDictionary<string, long>(_counts, StringComparer.Ordinal);

    public long SumWithPrefix(string prefix) => _counts.Where(kv => kv.Key.StartsWith(prefix, StringComparison.Ordinal)).Sum(kv => kv.Value);
}
