using System.Collections.Immutable;

namespace SieveQ.Sieve.Replica;

/// <summary>One (sender, receiver) route of a receiver queue: its cursors and its unacknowledged items, oldest first. Immutable.</summary>
internal sealed record QueuedRoute(long LastIssued, long AckedUpTo, ImmutableList<QueuedItem> Items)
{
    public static readonly QueuedRoute Empty = new(0, 0, ImmutableList<QueuedItem>.Empty);

    public bool TryGet(long routeSeq, out QueuedItem? item)
    {
        item = null;
        if (routeSeq <= AckedUpTo || routeSeq > LastIssued)
        {
            return false;
        }
        item = Items[(int)(routeSeq - AckedUpTo - 1)];
        return true;
    }
}

/// <summary>
/// A receiver queue as it stood after one execution: immutable, so any thread may read it while the
/// execution thread goes on (it shares structure with the live queue, it is not a copy).
/// </summary>
public sealed class ReceiverQueueView
{
    public static readonly ReceiverQueueView Empty = new(ImmutableSortedDictionary<int, QueuedRoute>.Empty, 0, 0);

    private readonly ImmutableSortedDictionary<int, QueuedRoute> _routes;

    internal ReceiverQueueView(ImmutableSortedDictionary<int, QueuedRoute> routes, int count, long occupancyBytes)
    {
        _routes = routes;
        Count = count;
        OccupancyBytes = occupancyBytes;
    }

    /// <summary>Unacknowledged messages.</summary>
    public int Count { get; }

    /// <summary>Charged bytes queued, plus those the held messages for this receiver reserve.</summary>
    public long OccupancyBytes { get; }

    public bool TryGet(int sender, long routeSeq, out QueuedItem? item)
    {
        item = null;
        return _routes.TryGetValue(sender, out var route) && route.TryGet(routeSeq, out item);
    }

    /// <summary>Unacknowledged items, sender by sender, oldest first.</summary>
    public IEnumerable<QueuedItem> Pending()
    {
        foreach (var route in _routes.Values)
        {
            foreach (var item in route.Items)
            {
                yield return item;
            }
        }
    }
}
