using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// Requests received and not yet executed, in arrival order (so the oldest is the first to time
/// out and the first to be proposed). Bounded in total; per-client bounds come from the window.
/// </summary>
internal sealed class RequestPool(int capacity)
{
    private readonly LinkedList<PendingRequest> _order = new();
    private readonly Dictionary<RequestId, LinkedListNode<PendingRequest>> _index = [];

    public int Count => _index.Count;
    public bool IsFull => _index.Count >= capacity;
    public PendingRequest? Oldest => _order.First?.Value;

    public bool Contains(RequestId id) => _index.ContainsKey(id);

    public bool TryAdd(ClientRequest request, long now)
    {
        if (_index.ContainsKey(request.Id) || IsFull)
        {
            return false;
        }
        _index[request.Id] = _order.AddLast(new PendingRequest(request, now));
        return true;
    }

    public void Remove(RequestId id)
    {
        if (_index.Remove(id, out var node))
        {
            _order.Remove(node);
        }
    }

    public void RemoveWhere(Func<ClientRequest, bool> predicate)
    {
        var node = _order.First;
        while (node is not null)
        {
            var next = node.Next;
            if (predicate(node.Value.Request))
            {
                _index.Remove(node.Value.Request.Id);
                _order.Remove(node);
            }
            node = next;
        }
    }

    public IEnumerable<PendingRequest> InArrivalOrder() => _order;

    /// <summary>A new leader gets a full time-out before it is judged, so every pending request's clock restarts.</summary>
    public void RestartTimers(long now)
    {
        foreach (var p in _order)
        {
            p.ArrivedAt = now;
            p.Forwarded = false;
        }
    }
}

internal sealed class PendingRequest(ClientRequest request, long arrivedAt)
{
    public ClientRequest Request { get; } = request;
    public long ArrivedAt { get; set; } = arrivedAt;
    public bool Forwarded { get; set; }
}
