namespace SieveQ.Bft.Hosting;

/// <summary>
/// Lets threads take turns at something only one may do at a time (drive the core, write to a link): free,
/// held by one thread, or closed for good. Whoever gives its turn back must look for work again afterwards,
/// which is why <see cref="Release"/> is a full fence.
/// </summary>
internal sealed class TurnFlag
{
    private const int Free = 0;
    private const int Held = 1;
    private const int Closed = 2;
    private int _state;

    public bool TryTake() => Interlocked.CompareExchange(ref _state, Held, Free) == Free;

    public void Release() => Interlocked.Exchange(ref _state, Free);

    /// <summary>Closes at once, from the thread that holds the turn.</summary>
    public void Close() => Volatile.Write(ref _state, Closed);

    /// <summary>Closes once no thread holds the turn, waiting at most about <paramref name="maxWaitMs"/>; false if one still did.</summary>
    public async Task<bool> CloseWhenFreeAsync(int maxWaitMs)
    {
        for (var waited = 0; waited < maxWaitMs; waited++)
        {
            if (Interlocked.CompareExchange(ref _state, Closed, Free) != Held)
            {
                return true;
            }
            await Task.Delay(1).ConfigureAwait(false);
        }
        return false;
    }
}
