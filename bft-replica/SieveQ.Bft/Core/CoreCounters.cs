namespace SieveQ.Bft.Core;

/// <summary>
/// Why messages were dropped and what the core did, by name. Hosts export these as metrics; the
/// simulator and tests read them to check that bad input was counted, not silently lost.
/// </summary>
public sealed class CoreCounters
{
    private readonly SortedDictionary<string, long> _counts = new(StringComparer.Ordinal);

    public void Add(string name, long by = 1)
    {
        _counts.TryGetValue(name, out var v);
        _counts[name] = v + by;
    }

    public long this[string name] => _counts.TryGetValue(name, out var v) ? v : 0;

    public IReadOnlyDictionary<string, long> Snapshot() => new SortedDictionary<string, long>(_counts, StringComparer.Ordinal);

    public long DroppedTotal => _counts.Where(kv => kv.Key.StartsWith("drop.", StringComparison.Ordinal)).Sum(kv => kv.Value);
}
