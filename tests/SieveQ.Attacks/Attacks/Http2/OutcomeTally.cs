using System.Collections.Concurrent;

namespace SieveQ.Attacks.Attacks.Http2;

/// <summary>Counts by name, written from many attacker tasks: how the server ended streams and connections.</summary>
internal sealed class OutcomeTally
{
    private readonly ConcurrentDictionary<string, long> _counts = new(StringComparer.Ordinal);

    public void Add(string name, long n = 1) => _counts.AddOrUpdate(name, n, (_, v) => v + n);

    public long this[string name] => _counts.TryGetValue(name, out var v) ? v : 0;

    public IEnumerable<KeyValuePair<string, long>> All => _counts.OrderBy(kv => kv.Key, StringComparer.Ordinal);
}
