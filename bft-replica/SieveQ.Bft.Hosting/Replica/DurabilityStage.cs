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
/// </summary>
public sealed class DurabilityStage : IAsyncDisposable
{
    private const int MaxPendingDrains = 256;
    private readonly WriteAheadLog _wal;
    private readonly Action<List<PendingSend>> _send;
    private readonly Channel<(List<CoreOutput> Records, List<PendingSend> Sends)> _work =
        Channel.CreateBounded<(List<CoreOutput>, List<PendingSend>)>(new BoundedChannelOptions(MaxPendingDrains) { SingleReader = true, SingleWriter = true });
    private readonly Task _run;
    private int _pending;

    public DurabilityStage(WriteAheadLog wal, Action<List<PendingSend>> send)
    {
        _wal = wal;
        _send = send;
        _run = Task.Run(RunAsync);
    }

    /// <summary>True while earlier work is not yet released; later sends must then queue behind it.</summary>
    public bool Busy => Volatile.Read(ref _pending) > 0;

    public int Pending => Volatile.Read(ref _pending);

    /// <summary>Queues one drain's records and sends; waits only when the disk is far behind (bounded backlog).</summary>
    public ValueTask SubmitAsync(List<CoreOutput> records, List<PendingSend> sends, CancellationToken ct)
    {
        Interlocked.Increment(ref _pending);
        return _work.Writer.WriteAsync((records, sends), ct);
    }

    private async Task RunAsync()
    {
        var batch = new List<(List<CoreOutput> Records, List<PendingSend> Sends)>();
        while (await _work.Reader.WaitToReadAsync().ConfigureAwait(false))
        {
            batch.Clear();
            while (_work.Reader.TryRead(out var item))
            {
                batch.Add(item);
            }
            foreach (var (records, _) in batch)
            {
                foreach (var r in records)
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
            _wal.Sync();
            foreach (var (_, sends) in batch)
            {
                _send(sends);
                Interlocked.Decrement(ref _pending);
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        _work.Writer.TryComplete();
        await _run.ConfigureAwait(false);
        _wal.Sync();
    }
}
