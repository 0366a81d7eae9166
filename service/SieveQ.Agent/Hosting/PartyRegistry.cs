using System.Collections.Concurrent;

namespace SieveQ.Agent.Hosting;

/// <summary>
/// One hosted party (sender-SQ or post-SQ) per id, created on first use and shared by every
/// application stream that opens it: a sender's numbers and window, or a receiver's cursors, must be
/// one however many streams use them.
/// </summary>
internal sealed class PartyRegistry<T> : IAsyncDisposable
    where T : class, IAsyncDisposable
{
    private readonly ConcurrentDictionary<int, Lazy<T>> _parties = new();
    private readonly Func<int, T> _create;

    public PartyRegistry(Func<int, T> create) => _create = create;

    public T Get(int id)
    {
        var lazy = _parties.GetOrAdd(id, i => new Lazy<T>(() => _create(i), LazyThreadSafetyMode.ExecutionAndPublication));
        try
        {
            return lazy.Value;
        }
        catch
        {
            // A failed start (keys missing, state directory locked) is not cached: the next stream tries again.
            _parties.TryRemove(new KeyValuePair<int, Lazy<T>>(id, lazy));
            throw;
        }
    }

    public IReadOnlyList<(int Id, T Party)> Started =>
        _parties.Where(kv => kv.Value.IsValueCreated).Select(kv => (kv.Key, kv.Value.Value)).OrderBy(p => p.Key).ToList();

    public async ValueTask DisposeAsync()
    {
        foreach (var (_, party) in Started)
        {
            await party.DisposeAsync().ConfigureAwait(false);
        }
    }
}
