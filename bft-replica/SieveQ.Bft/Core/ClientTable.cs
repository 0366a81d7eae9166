using System.Buffers;
using SieveQ.Bft.Codec;

namespace SieveQ.Bft.Core;

/// <summary>
/// Replicated record of which request sequence numbers each client has had executed: a low-water
/// mark (everything at or below executed) plus the executed numbers above it, at most one window's
/// worth, and the replies to the most recent ones. Part of every checkpoint, so a replayed request
/// is never executed twice and a retransmitted one is answered, even by a replica that restarted or
/// caught up by state transfer.
/// </summary>
internal sealed class ClientTable(int repliesPerClient)
{
    private readonly SortedDictionary<int, ClientRecord> _clients = [];

    public int Count => _clients.Count;

    public bool IsExecuted(int client, long sequence) =>
        _clients.TryGetValue(client, out var r) && (sequence <= r.LowWater || r.Above.Contains(sequence));

    public long LowWater(int client) => _clients.TryGetValue(client, out var r) ? r.LowWater : 0;

    /// <summary>True when the number is not executed and lies inside the client's window.</summary>
    public bool Admissible(int client, long sequence, int window, int maxClients)
    {
        if (!_clients.TryGetValue(client, out var r))
        {
            return _clients.Count < maxClients && sequence >= 1 && sequence <= window;
        }
        return sequence > r.LowWater && sequence <= r.LowWater + window && !r.Above.Contains(sequence);
    }

    public (long ConsensusId, byte[] Result)? FindReply(int client, long sequence) =>
        _clients.TryGetValue(client, out var r) && r.Replies.TryGetValue(sequence, out var reply) ? reply : null;

    public void MarkExecuted(int client, long sequence, long consensusId, byte[] result)
    {
        if (!_clients.TryGetValue(client, out var r))
        {
            r = new ClientRecord();
            _clients[client] = r;
        }
        if (sequence <= r.LowWater)
        {
            return;
        }
        r.Above.Add(sequence);
        while (r.Above.Remove(r.LowWater + 1))
        {
            r.LowWater++;
        }
        r.Replies[sequence] = (consensusId, result);
        while (r.Replies.Count > repliesPerClient)
        {
            r.Replies.Remove(r.Replies.Keys.First());
        }
    }

    public void Encode(IBufferWriter<byte> output)
    {
        var w = new WireWriter(output);
        w.I32(_clients.Count);
        foreach (var (id, r) in _clients)
        {
            w.I32(id);
            w.I64(r.LowWater);
            w.I32(r.Above.Count);
            foreach (var s in r.Above)
            {
                w.I64(s);
            }
            w.I32(r.Replies.Count);
            foreach (var (seq, reply) in r.Replies)
            {
                w.I64(seq);
                w.I64(reply.ConsensusId);
                w.Bytes(reply.Result);
            }
        }
    }

    internal static ClientTable Decode(ref WireReader r, int maxClients, int window, int repliesPerClient)
    {
        var t = new ClientTable(repliesPerClient);
        var n = r.Count(maxClients, "client count");
        for (var i = 0; i < n; i++)
        {
            var id = r.NonNegative("client id");
            var rec = new ClientRecord { LowWater = r.NonNegative64("low water") };
            var m = r.Count(window, "executed above low water");
            for (var j = 0; j < m; j++)
            {
                rec.Above.Add(r.NonNegative64("executed sequence"));
            }
            var k = r.Count(repliesPerClient, "remembered replies");
            for (var j = 0; j < k; j++)
            {
                var seq = r.NonNegative64("reply sequence");
                rec.Replies[seq] = (r.NonNegative64("reply cid"), r.Bytes(WireLimits.MaxResultBytes, "reply result"));
            }
            t._clients[id] = rec;
        }
        return t;
    }

    private sealed class ClientRecord
    {
        public long LowWater { get; set; }
        public SortedSet<long> Above { get; } = [];
        public SortedDictionary<long, (long ConsensusId, byte[] Result)> Replies { get; } = [];
    }
}
