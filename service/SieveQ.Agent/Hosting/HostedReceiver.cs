using System.Runtime.CompilerServices;
using SieveQ.Sieve.Envelope;
using SieveQ.Sdk.Receiver;

namespace SieveQ.Agent.Hosting;

/// <summary>
/// One post-SQ shared by the application streams of one receiver, one stream at a time. Deliveries
/// handed to an application stay here until it commits them; a stream that ends before committing
/// leaves them to be replayed, first, to the next stream. So the application sees each message until
/// it commits it (at least once), and the SDK's cursor moves only over what was committed. At most
/// <c>maxUncommitted</c> deliveries are outstanding: an application that does not commit stops
/// receiving.
/// </summary>
internal sealed class HostedReceiver : IAsyncDisposable
{
    private readonly Lock _lock = new();
    private readonly LinkedList<ReceivedMessage> _uncommitted = new();
    private readonly SemaphoreSlim _credits;
    private readonly SemaphoreSlim _attached = new(1, 1);

    public HostedReceiver(SieveQReceiver receiver, int maxUncommitted)
    {
        Receiver = receiver;
        _credits = new SemaphoreSlim(maxUncommitted, maxUncommitted);
    }

    public SieveQReceiver Receiver { get; }

    public int Uncommitted
    {
        get
        {
            lock (_lock)
            {
                return _uncommitted.Count;
            }
        }
    }

    /// <summary>
    /// Claims the receiver for one application stream; null when another stream still has it after
    /// <paramref name="wait"/> (an application reconnecting may be faster than the agent noticing its old stream end).
    /// </summary>
    public async Task<IDisposable?> TryAttachAsync(TimeSpan wait, CancellationToken ct) =>
        await _attached.WaitAsync(wait, ct).ConfigureAwait(false) ? new Attachment(this) : null;

    /// <summary>The uncommitted deliveries of earlier streams, then new ones, until <paramref name="ct"/> ends the stream.</summary>
    public async IAsyncEnumerable<ReceivedMessage> DeliverAsync([EnumeratorCancellation] CancellationToken ct)
    {
        ReceivedMessage[] replay;
        lock (_lock)
        {
            replay = [.. _uncommitted];
        }
        foreach (var m in replay)
        {
            yield return m;
        }
        var next = Receiver.ReadAllAsync(ct).GetAsyncEnumerator(ct);
        await using (next.ConfigureAwait(false))
        {
            while (true)
            {
                // Room first, then the message: a message taken from the SDK must be recorded before any wait.
                await _credits.WaitAsync(ct).ConfigureAwait(false);
                bool more;
                try
                {
                    more = await next.MoveNextAsync().ConfigureAwait(false);
                }
                catch
                {
                    _credits.Release();
                    throw;
                }
                if (!more)
                {
                    _credits.Release();
                    yield break;
                }
                lock (_lock)
                {
                    _uncommitted.AddLast(next.Current);
                }
                yield return next.Current;
            }
        }
    }

    /// <summary>The application processed the first <paramref name="count"/> deliveries it has not committed yet.</summary>
    public async ValueTask CommitAsync(long count, CancellationToken ct)
    {
        var cursors = new SortedDictionary<int, long>();
        var taken = 0;
        lock (_lock)
        {
            while (taken < count && _uncommitted.First is { } first)
            {
                cursors[first.Value.Sender] = Math.Max(cursors.GetValueOrDefault(first.Value.Sender), first.Value.RouteSeq);
                _uncommitted.RemoveFirst();
                taken++;
            }
        }
        if (taken == 0)
        {
            return;
        }
        _credits.Release(taken);
        await Receiver.CommitAsync(cursors.Select(kv => new DeliveredCursor(kv.Key, kv.Value)).ToArray(), ct).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        await Receiver.DisposeAsync().ConfigureAwait(false);
        _credits.Dispose();
        _attached.Dispose();
    }

    private sealed class Attachment(HostedReceiver owner) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                owner._attached.Release();
            }
        }
    }
}
