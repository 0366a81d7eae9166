namespace SieveQ.Bft.Hosting.Replica;

/// <summary>
/// How much one link may have waiting for the core: a number of messages and a number of encoded bytes.
/// When either is used up the link's receive loop waits, so it stops reading its socket and TCP pushes back
/// on the sender. Counting bytes as well as messages matters: a faulty replica could otherwise park
/// thousands of frame-sized messages in memory. One message is always admitted, however large, so a
/// single maximal message cannot deadlock the link.
/// </summary>
public sealed class LinkCredit(int maxMessages, long maxBytes)
{
    private readonly Lock _lock = new();
    private int _messages;
    private long _bytes;
    private TaskCompletionSource? _waiter;

    public int Messages => Volatile.Read(ref _messages);
    public long Bytes => Interlocked.Read(ref _bytes);

    public ValueTask AcquireAsync(int bytes, CancellationToken ct)
    {
        Task wait;
        lock (_lock)
        {
            if (TryTake(bytes))
            {
                return ValueTask.CompletedTask;
            }
            _waiter ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            wait = _waiter.Task;
        }
        return AcquireSlowAsync(bytes, wait, ct);
    }

    private async ValueTask AcquireSlowAsync(int bytes, Task wait, CancellationToken ct)
    {
        while (true)
        {
            await wait.WaitAsync(ct).ConfigureAwait(false);
            lock (_lock)
            {
                if (TryTake(bytes))
                {
                    return;
                }
                _waiter ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                wait = _waiter.Task;
            }
        }
    }

    private bool TryTake(int bytes)
    {
        if (_messages == 0 || (_messages < maxMessages && _bytes + bytes <= maxBytes))
        {
            _messages++;
            _bytes += bytes;
            return true;
        }
        return false;
    }

    public void Release(int bytes)
    {
        TaskCompletionSource? waiter;
        lock (_lock)
        {
            _messages--;
            _bytes -= bytes;
            waiter = _waiter;
            _waiter = null;
        }
        waiter?.TrySetResult();
    }
}
