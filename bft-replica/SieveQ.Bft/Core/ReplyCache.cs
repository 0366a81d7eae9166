using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// Recent replies kept so a client that retransmits an already executed request gets its answer
/// again. Local (not replicated) and bounded with first-in-first-out eviction.
/// </summary>
internal sealed class ReplyCache(int capacity)
{
    private readonly Dictionary<RequestId, Reply> _replies = [];
    private readonly Queue<RequestId> _order = new();

    public void Add(RequestId id, Reply reply)
    {
        if (_replies.TryAdd(id, reply))
        {
            _order.Enqueue(id);
            while (_order.Count > capacity)
            {
                _replies.Remove(_order.Dequeue());
            }
        }
    }

    public Reply? Find(RequestId id) => _replies.GetValueOrDefault(id);
}
