using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>An approved message waiting for its receiver's acknowledgement.</summary>
public sealed record QueuedItem(int Sender, long SenderSeq, long RouteSeq, Digest DataDigest, byte[] Data);

/// <summary>
/// Queue semantics towards one receiver: approved messages stay until the receiver acknowledges
/// them, numbered per (sender, receiver) route without gaps. Bounded: held messages bound for this
/// receiver reserve room too, so a message admitted at (e) always finds room after (f).
/// </summary>
internal sealed class ReceiverQueue
{
    private sealed class RouteState
    {
        public long LastIssued;
        public long AckedUpTo;
        public readonly List<QueuedItem> Items = [];
    }

    private readonly SortedDictionary<int, RouteState> _routes = [];

    public int Count { get; private set; }

    /// <summary>Charged bytes (<see cref="ReplicaSieveOptions.ChargedBytes"/>) of the queued messages.</summary>
    public long Bytes { get; private set; }

    /// <summary>Held messages (reorder buffer) addressed to this receiver.</summary>
    public int Held { get; set; }

    /// <summary>Charged bytes the held messages addressed to this receiver reserve.</summary>
    public long HeldBytes { get; set; }

    public long OccupancyBytes => Bytes + HeldBytes;

    public long NextBatchNo { get; set; } = 1;

    public int Occupancy => Count + Held;

    public QueuedItem Enqueue(int sender, long senderSeq, byte[] data)
    {
        if (!_routes.TryGetValue(sender, out var route))
        {
            route = new RouteState();
            _routes.Add(sender, route);
        }
        var item = new QueuedItem(sender, senderSeq, ++route.LastIssued, TaggedHash.DataDigest(data), data);
        route.Items.Add(item);
        Count++;
        Bytes += ReplicaSieveOptions.ChargedBytes(data.Length);
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
        for (var i = 0; i < n; i++)
        {
            Bytes -= ReplicaSieveOptions.ChargedBytes(route.Items[i].Data.Length);
        }
        route.Items.RemoveRange(0, n);
        route.AckedUpTo = upTo;
        Count -= n;
        return n;
    }

    public bool TryGet(int sender, long routeSeq, out QueuedItem? item)
    {
        item = null;
        if (!_routes.TryGetValue(sender, out var route) || routeSeq <= route.AckedUpTo || routeSeq > route.LastIssued)
        {
            return false;
        }
        item = route.Items[(int)(routeSeq - route.AckedUpTo - 1)];
        return true;
    }

    /// <summary>Unacknowledged items, sender by sender, oldest first (for retransmission after a receiver restart).</summary>
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
        for (var i = 0; i < routes; i++)
        {
            var sender = r.Id("route sender");
            if (sender <= previous)
            {
                throw new MalformedEnvelopeException("routes not sorted");
            }
            previous = sender;
            var route = new RouteState { LastIssued = r.Seq("last issued"), AckedUpTo = r.Seq("acked") };
            var n = r.Count(int.MaxValue, "items");
            if (route.LastIssued - route.AckedUpTo != n)
            {
                throw new MalformedEnvelopeException("route item count does not match its cursors");
            }
            for (var k = 0; k < n; k++)
            {
                var senderSeq = r.Seq("sender seq");
                var data = r.Bytes(EnvelopeLimits.MaxDataBytes, "data").ToArray();
                route.Items.Add(new QueuedItem(sender, senderSeq, route.AckedUpTo + 1 + k, TaggedHash.DataDigest(data), data));
                q.Bytes += ReplicaSieveOptions.ChargedBytes(data.Length);
            }
            q._routes.Add(sender, route);
            q.Count += n;
        }
        return q;
    }
}
