namespace SieveQ.Sdk.Sender;

/// <summary>Callers of WaitAcknowledgedAsync, released in sequence order as the acknowledged prefix grows.</summary>
internal sealed class AcknowledgementWaiters
{
    private readonly Lock _lock = new();
    private readonly PriorityQueue<TaskCompletionSource, long> _waiting = new();
    private long _acknowledgedUpTo;
    private Exception? _failure;

    public long AcknowledgedUpTo => Volatile.Read(ref _acknowledgedUpTo);

    public Task WaitAsync(long seq, CancellationToken ct)
    {
        TaskCompletionSource tcs;
        lock (_lock)
        {
            if (_failure is not null)
            {
                return Task.FromException(_failure);
            }
            if (seq <= _acknowledgedUpTo)
            {
                return Task.CompletedTask;
            }
            tcs = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiting.Enqueue(tcs, seq);
        }
        if (!ct.CanBeCanceled)
        {
            return tcs.Task;
        }
        var registration = ct.Register(() => tcs.TrySetCanceled(ct));
        return tcs.Task.ContinueWith(t =>
        {
            registration.Dispose();
            return t;
        }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).Unwrap();
    }

    public void Advance(long upTo)
    {
        var due = new List<TaskCompletionSource>();
        lock (_lock)
        {
            if (upTo <= _acknowledgedUpTo)
            {
                return;
            }
            Volatile.Write(ref _acknowledgedUpTo, upTo);
            while (_waiting.TryPeek(out var tcs, out var seq) && seq <= upTo)
            {
                _waiting.Dequeue();
                due.Add(tcs);
            }
        }
        foreach (var tcs in due)
        {
            tcs.TrySetResult();
        }
    }

    public void FailAll(Exception e)
    {
        var all = new List<TaskCompletionSource>();
        lock (_lock)
        {
            _failure ??= e;
            while (_waiting.TryDequeue(out var tcs, out _))
            {
                all.Add(tcs);
            }
        }
        foreach (var tcs in all)
        {
            tcs.TrySetException(e);
        }
    }
}
