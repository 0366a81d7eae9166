using System.Collections.Immutable;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>An approved message waiting for its receiver's acknowledgement.</summary>
public sealed record QueuedItem(int Sender, long SenderSeq, long RouteSeq, Digest DataDigest, byte[] Data);

/// <summary>
/// Queue semantics towards one receiver: approved messages stay until the receiver acknowledges
/// them, numbered per (sender, receiver) route without gaps. Bounded: held messages bound for this
/// receiver reserve room too, so a message admitted at (e) always finds room after (f).
/// <para>
/// Mutated by the execution thread only, but kept in persistent (immutable, structurally shared)
/// collections, so <see cref="View"/> hands other threads the queue as it stands for the price of one
/// small object, however long it is; the execution thread then goes on with new versions of the routes.
/// </para>
/// </summary>
internal sealed class ReceiverQueue
{
    private ImmutableSortedDictionary<int, QueuedRoute> _routes = ImmutableSortedDictionary<int, QueuedRoute>.Empty;
    private ReceiverQueueView? _view;
    private int _held;
    private long _heldBytes;

    public int Count { get; private set; }

    /// <summary>Charged bytes (<see cref="ReplicaSieveOptions.ChargedBytes"/>) of the queued messages.</summary>
    public long Bytes { get; private set; }

    /// <summary>Held messages (reorder buffer) addressed to this receiver.</summary>
    public int Held
    {
        get => _held;
        set
        {
            _held = value;
            _view = null;
        }
    }

    /// <summary>Charged bytes the held messages addressed to this receiver reserve.</summary>
    public long HeldBytes
    {
        get => _heldBytes;
        set
        {
            _heldBytes = value;
            _view = null;
        }
    }

    public long OccupancyBytes => Bytes + HeldBytes;

    public long NextBatchNo { get; set; } = 1;

    public int Occupancy => Count + Held;

    /// <summary>The queue as it stands now, immutable; the same object until the queue next changes.</summary>
    public ReceiverQueueView View => _view ??= new ReceiverQueueView(_routes, Count, OccupancyBytes);

    public QueuedItem Enqueue(int sender, long senderSeq, byte[] data)
    {
        var route = _routes.GetValueOrDefault(sender) ?? QueuedRoute.Empty;
        var item = new QueuedItem(sender, senderSeq, route.LastIssued + 1, TaggedHash.DataDigest(data), data);
        _routes = _routes.SetItem(sender, route with { LastIssued = item.RouteSeq, Items = route.Items.Add(item) });
        Count++;
        Bytes += ReplicaSieveOptions.ChargedBytes(data.Length);
        _view = null;
        return item;
    }

    /// <summary>Drops everything up to <paramref name="upTo"/> on the route; returns how many went.</summary>
    public int Acknowledge(int sender, long upTo)
    {
        if (!_routes.TryGetValue(sender, out var route))
        {
            return 0;
        }
        // A receiver cannot acknowledge what was never issued to it.
        upTo = Math.Min(upTo, route.LastIssued);
        if (upTo <= route.AckedUpTo)
        {
            return 0;
        }
        var n = (int)(upTo - route.AckedUpTo);
        var counted = 0;
        foreach (var item in route.Items)
        {
            if (counted++ == n)
            {
                break;
            }
            Bytes -= ReplicaSieveOptions.ChargedBytes(item.Data.Length);
        }
        _routes = _routes.SetItem(sender, route with { AckedUpTo = upTo, Items = route.Items.RemoveRange(0, n) });
        Count -= n;
        _view = null;
        return n;
    }

    public bool TryGet(int sender, long routeSeq, out QueuedItem? item)
    {
        item = null;
        return _routes.TryGetValue(sender, out var route) && route.TryGet(routeSeq, out item);
    }

    public void WriteTo(CanonicalWriter w)
    {
        w.Id(Held);
        w.Seq(HeldBytes);
        w.Seq(NextBatchNo);
        w.Id(_routes.Count);
        foreach (var (sender, route) in _routes)
        {
            w.Id(sender);
            w.Seq(route.LastIssued);
            w.Seq(route.AckedUpTo);
            w.Id(route.Items.Count);
            foreach (var i in route.Items)
            {
                w.Seq(i.SenderSeq);
                w.Bytes(i.Data);
            }
        }
    }

    public static ReceiverQueue ReadFrom(ref CanonicalReader r)
    {
        var q = new ReceiverQueue { Held = r.Id("held"), HeldBytes = r.Seq("held bytes"), NextBatchNo = r.Seq("batch no") };
        var routes = r.Count(EnvelopeLimits.MaxItems, "routes");
        var previous = -1;
        var built = ImmutableSortedDictionary.CreateBuilder<int, QueuedRoute>();
        for (var i = 0; i < routes; i++)
        {
            var sender = r.Id("route sender");
            if (sender <= previous)
            {
                throw new MalformedEnvelopeException("routes not sorted");
            }
            previous = sender;
            var lastIssued = r.Seq("last issued");
            var ackedUpTo = r.Seq("acked");
            var n = r.Count(int.MaxValue, "items");
            if (lastIssued - ackedUpTo != n)
            {
                throw new MalformedEnvelopeException("route item count does not match its cursors");
            }
            var items = ImmutableList.CreateBuilder<QueuedItem>();
            for (var k = 0; k < n; k++)
            {
                var senderSeq = r.Seq("sender seq");
                var data = r.Bytes(EnvelopeLimits.MaxDataBytes, "data").ToArray();
                items.Add(new QueuedItem(sender, senderSeq, ackedUpTo + 1 + k, TaggedHash.DataDigest(data), data));
                q.Bytes += ReplicaSieveOptions.ChargedBytes(data.Length);
            }
            built.Add(sender, new QueuedRoute(lastIssued, ackedUpTo, items.ToImmutable()));
            q.Count += n;
        }
        q._routes = built.ToImmutable();
        return q;
    }
}
