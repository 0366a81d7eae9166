using System.Collections.Concurrent;

namespace SieveQ.Agent.Hosting;

/// <summary>
/// One hosted party (sender-SQ or post-SQ) per id, started on first use and shared by every
/// application stream that opens it: a sender's numbers and window, or a receiver's cursors, must be
/// one however many streams use them. Starting may wait on the deployment (the enrolment check and the
/// id lease), so streams that open the same id meanwhile wait for the one start.
/// </summary>
internal sealed class PartyRegistry<T> : IAsyncDisposable
    where T : class, IAsyncDisposable
{
    private readonly ConcurrentDictionary<int, Lazy<Task<T>>> _parties = new();
    private readonly Func<int, Task<T>> _start;

    public PartyRegistry(Func<int, Task<T>> start) => _start = start;

    public async Task<T> GetAsync(int id)
    {
        var lazy = _parties.GetOrAdd(id, i => new Lazy<Task<T>>(() => _start(i), LazyThreadSafetyMode.ExecutionAndPublication));
        try
        {
            return await lazy.Value.ConfigureAwait(false);
        }
        catch
        {
            // A failed start (keys missing, state directory locked, the id held elsewhere) is not cached: the next stream tries again.
            _parties.TryRemove(new KeyValuePair<int, Lazy<Task<T>>>(id, lazy));
            throw;
        }
    }

    public IReadOnlyList<(int Id, T Party)> Started =>
        _parties.Where(kv => kv.Value.IsValueCreated && kv.Value.Value.IsCompletedSuccessfully)
            .Select(kv => (kv.Key, kv.Value.Value.Result)).OrderBy(p => p.Key).ToList();

    public async ValueTask DisposeAsync()
    {
        foreach (var (_, party) in Started)
        {
            await party.DisposeAsync().ConfigureAwait(false);
        }
    }
}
