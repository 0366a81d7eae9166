using System.Threading.Channels;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Storage;
using SieveQ.Bft.Hosting.Transport;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>An encoded message ready for a link; <see cref="To"/> is a node id, or <see cref="AllReplicas"/>.</summary>
public readonly record struct PendingSend(int To, OutboundPayload Payload)
{
    public const int AllReplicas = -1;
}

/// <summary>
/// Group commit between the core and the network: the core loop hands over each drain's log records and
/// the messages that followed them; this stage appends everything queued, fsyncs once, and only then
/// releases the messages. The core keeps stepping meanwhile, so a slow disk delays messages, not ordering
/// work. Work stays in FIFO order, so no message ever overtakes a record it might depend on.
/// Records that gate nothing (<see cref="DurableRecord.GatesLaterSends"/> false: decisions) come as lazy
/// work: appended and handed to the operating system at once (a process crash loses none), made durable
/// by the next sync of gating work, or after the lazy sync delay (<see cref="DefaultLazySyncDelay"/>) if
/// none comes, so a quiet replica's last decisions do not stay exposed to a power loss for long.
/// </summary>
public sealed class DurabilityStage : IAsyncDisposable
{
    private const int MaxPendingDrains = 256;
    public static readonly TimeSpan DefaultLazySyncDelay = TimeSpan.FromMilliseconds(50);
    private readonly TimeSpan _lazySyncDelay;
    private readonly WriteAheadLog _wal;
    private readonly Action<List<PendingSend>> _send;
    private readonly Channel<DurabilityWork> _work =
        Channel.CreateBounded<DurabilityWork>(new BoundedChannelOptions(MaxPendingDrains) { SingleReader = true, SingleWriter = true });
    private readonly Task _run;
    private int _pending;
    private long _lazyRecords;
    private long _lazySyncs;

    public DurabilityStage(WriteAheadLog wal, Action<List<PendingSend>> send, TimeSpan? lazySyncDelay = null)
    {
        _wal = wal;
        _send = send;
        _lazySyncDelay = lazySyncDelay ?? DefaultLazySyncDelay;
        _run = Task.Run(RunAsync);
    }

    /// <summary>True while earlier gating work is not yet released; later sends must then queue behind it.</summary>
    public bool Busy => Volatile.Read(ref _pending) > 0;

    public int Pending => Volatile.Read(ref _pending);

    /// <summary>Records appended without holding any message (decisions).</summary>
    public long LazyRecords => Interlocked.Read(ref _lazyRecords);

    /// <summary>Syncs made only because lazy records waited the lazy sync delay with no gating work.</summary>
    public long LazySyncs => Interlocked.Read(ref _lazySyncs);

    /// <summary>Queues one drain's records and sends; waits only when the disk is far behind (bounded backlog).</summary>
    public ValueTask SubmitAsync(List<CoreOutput> records, List<PendingSend> sends, CancellationToken ct)
    {
        Interlocked.Increment(ref _pending);
        return _work.Writer.WriteAsync(new DurabilityWork(records, sends, Lazy: false), ct);
    }

    /// <summary>
    /// Queues records that gate no message; the caller sends the drain's messages itself. Only valid when
    /// every record's <see cref="DurableRecord.GatesLaterSends"/> is false and no gating work is pending.
    /// </summary>
    public ValueTask SubmitLazyAsync(List<CoreOutput> records, CancellationToken ct)
    {
        Interlocked.Add(ref _lazyRecords, records.Count);
        return _work.Writer.WriteAsync(new DurabilityWork(records, [], Lazy: true), ct);
    }

    private async Task RunAsync()
    {
        var batch = new List<DurabilityWork>();
        var unsynced = false;
        while (true)
        {
            if (!await WaitForWorkAsync(unsynced).ConfigureAwait(false))
            {
                if (!unsynced)
                {
                    return;
                }
                _wal.Sync();  // lazy records waited long enough with no gating work to carry them
                Interlocked.Increment(ref _lazySyncs);
                unsynced = false;
                continue;
            }
            batch.Clear();
            var gating = false;
            while (_work.Reader.TryRead(out var item))
            {
                batch.Add(item);
                gating |= !item.Lazy;
            }
            foreach (var work in batch)
            {
                foreach (var r in work.Records)
                {
                    switch (r)
                    {
                        case Persist p:
                            _wal.Append(p.Record);
                            break;
                        case TruncateDurableLog t:
                            _wal.Truncate(t.UpToConsensusId);
                            break;
                    }
                }
            }
            if (!gating)
            {
                // Decisions of a whole cluster killed at once must come back from the logs, or the queues
                // they filled read empty until certificates decide them again.
                _wal.WriteThrough();
                unsynced = true;
                continue;
            }
            _wal.Sync();
            unsynced = false;
            foreach (var work in batch)
            {
                if (!work.Lazy)
                {
                    _send(work.Sends);
                    Interlocked.Decrement(ref _pending);
                }
            }
        }
    }

    /// <summary>True when work is queued; false when the channel is complete or, with lazy records unsynced, the delay ran out.</summary>
    private async ValueTask<bool> WaitForWorkAsync(bool unsynced)
    {
        if (!unsynced)
        {
            return await _work.Reader.WaitToReadAsync().ConfigureAwait(false);
        }
        using var delay = new CancellationTokenSource(_lazySyncDelay);
        try
        {
            return await _work.Reader.WaitToReadAsync(delay.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (delay.IsCancellationRequested)
        {
            return false;
        }
    }

    public async ValueTask DisposeAsync()
    {
        _work.Writer.TryComplete();
        await _run.ConfigureAwait(false);
        _wal.Sync();
    }

    private readonly record struct DurabilityWork(List<CoreOutput> Records, List<PendingSend> Sends, bool Lazy);
}
