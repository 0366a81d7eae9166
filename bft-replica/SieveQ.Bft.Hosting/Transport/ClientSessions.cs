using System.Collections.Concurrent;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// Connected clients by id: replies to a client go out on the connection it dialled. A client that
/// reconnects replaces its previous session; replies for an absent client are dropped and counted
/// (the client retransmits and the replica answers from its reply cache).
/// </summary>
public sealed class ClientSessions(LinkSettings settings)
{
    private readonly ConcurrentDictionary<int, SendQueue> _sessions = new();

    public int Count => _sessions.Count;

    public long QueuedFrames => _sessions.Values.Sum(q => (long)q.Count);

    public bool TrySend(int clientId, OutboundPayload payload)
    {
        var queue = TrySendDeferred(clientId, payload);
        queue?.Kick();
        return queue is not null;
    }

    /// <summary>Queues without kicking; returns the queue to kick, or null if the message was dropped.</summary>
    public SendQueue? TrySendDeferred(int clientId, OutboundPayload payload)
    {
        if (_sessions.TryGetValue(clientId, out var q))
        {
            return q.TryEnqueueDeferred(payload) ? q : null;
        }
        TransportCounters.Drop(DropReason.NoRoute);
        payload.Release();
        return null;
    }

    /// <summary>Runs a client's session: its send pump and its receive loop, until either ends.</summary>
    public async Task ServeAsync(AuthenticatedLink link, Func<BftMessage, int, ValueTask> onMessage, CancellationToken ct)
    {
        var queue = new SendQueue(settings.SendQueueFrames, settings.SendQueueBytes);
        if (_sessions.TryGetValue(link.PeerId, out var old))
        {
            old.Complete();
        }
        _sessions[link.PeerId] = queue;
        using var session = CancellationTokenSource.CreateLinkedTokenSource(ct);
        try
        {
            var send = link.RunSendPumpAsync(queue, session.Token);
            var receive = link.RunReceiveAsync(onMessage, session.Token);
            var first = await Task.WhenAny(send, receive).ConfigureAwait(false);
            await session.CancelAsync().ConfigureAwait(false);
            await link.DisposeAsync().ConfigureAwait(false);
            try
            {
                await Task.WhenAll(send, receive).ConfigureAwait(false);
            }
            catch (Exception) when (first.IsFaulted || session.IsCancellationRequested)
            {
                // the first failure is the one worth reporting; rethrow it below
            }
            await first.ConfigureAwait(false);
        }
        finally
        {
            _sessions.TryRemove(new KeyValuePair<int, SendQueue>(link.PeerId, queue));
            queue.Complete();
        }
    }
}
