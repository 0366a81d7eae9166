using System.Collections.Concurrent;
using System.Threading.Channels;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>A verified message waiting for the core, and the credit (messages and bytes) its link gets back once the core took it.</summary>
public readonly record struct InboundItem(BftMessage Message, LinkCredit? Credit, int Bytes)
{
    public void Release() => Credit?.Release(Bytes);
}

/// <summary>
/// What the single core loop consumes: replica traffic and client requests in separate queues (replica
/// traffic first, so a client flood cannot delay agreement), plus a doorbell the producers and the timer ring.
/// Each link holds a <see cref="LinkCredit"/>, so what one link has queued is bounded in messages and bytes,
/// and a link that runs out stops reading its socket: TCP back-pressure rather than memory growth.
/// </summary>
public sealed class CoreInbox
{
    private readonly ConcurrentQueue<InboundItem> _replicas = new();
    private readonly ConcurrentQueue<InboundItem> _clients = new();
    private readonly Channel<bool> _doorbell = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropWrite, SingleReader = true });

    public int ReplicaDepth => _replicas.Count;
    public int ClientDepth => _clients.Count;

    public void PostClient(InboundItem item)
    {
        _clients.Enqueue(item);
        Ring();
    }

    /// <summary>Queues without ringing; for a consumer that runs its drain on the producer's thread when idle.</summary>
    public void EnqueueReplica(InboundItem item) => _replicas.Enqueue(item);

    /// <inheritdoc cref="EnqueueReplica"/>
    public void EnqueueClient(InboundItem item) => _clients.Enqueue(item);

    public void Ring() => _doorbell.Writer.TryWrite(true);

    /// <summary>Waits until something was posted or the doorbell rang since the last wait.</summary>
    public async ValueTask WaitAsync(CancellationToken ct)
    {
        if (!_doorbell.Reader.TryRead(out _))
        {
            await _doorbell.Reader.ReadAsync(ct).ConfigureAwait(false);
        }
    }

    public bool TryTakeReplica(out InboundItem item) => _replicas.TryDequeue(out item);

    public bool TryTakeClient(out InboundItem item) => _clients.TryDequeue(out item);

    public bool IsEmpty => _replicas.IsEmpty && _clients.IsEmpty;
}
