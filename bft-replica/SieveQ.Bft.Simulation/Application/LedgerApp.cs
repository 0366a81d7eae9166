using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Application;

/// <summary>
/// The replicated application of the simulation: a hash chain over every executed request
/// (client, sequence, payload hash, instance, agreed timestamp) and the set of executed request
/// ids. Two replicas with the same chain head executed the same requests in the same order with
/// the same context; a request id seen twice is a double execution. Each result is the chain head
/// right after the request, so a client's f+1 matching replies also vouch for the whole prefix.
/// </summary>
internal sealed class LedgerApp(int replica, IExecutionObserver observer) : IReplicatedApplication
{
    private readonly SortedSet<RequestId> _executed = [];
    private Digest _head;
    private long _lastConsensusId;
    private long _lastTimestamp;

    public Digest Head => _head;
    public long LastConsensusId => _lastConsensusId;
    public int ExecutedCount => _executed.Count;

    public ExecutionOutcome Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        if (context.ConsensusId <= _lastConsensusId)
        {
            observer.OnLedgerFault(replica, $"instance {context.ConsensusId} executed after instance {_lastConsensusId}");
        }
        var results = new byte[requests.Count][];
        for (var i = 0; i < requests.Count; i++)
        {
            var r = requests[i];
            if (!_executed.Add(r.Id))
            {
                observer.OnLedgerFault(replica, $"request {r.Id} executed twice (again in instance {context.ConsensusId})");
            }
            _head = Chain(_head, r, context);
            results[i] = _head.ToArray();
            observer.OnExecuted(replica, context, r, _head);
        }
        _lastConsensusId = context.ConsensusId;
        _lastTimestamp = context.Timestamp;
        observer.OnBatchExecuted(replica, context, _head);
        return new ExecutionOutcome(results);
    }

    private static Digest Chain(Digest head, ClientRequest r, DecisionContext context)
    {
        Span<byte> buf = stackalloc byte[Digest.Size + 4 + 8 + Digest.Size + 8 + 8];
        head.CopyTo(buf);
        BinaryPrimitives.WriteInt32LittleEndian(buf[32..], r.From);
        BinaryPrimitives.WriteInt64LittleEndian(buf[36..], r.Sequence);
        SHA256.HashData(r.Payload, buf[44..76]);
        BinaryPrimitives.WriteInt64LittleEndian(buf[76..], context.ConsensusId);
        BinaryPrimitives.WriteInt64LittleEndian(buf[84..], context.Timestamp);
        return Digest.Compute(buf);
    }

    /// <summary>Layout: last instance, its timestamp, chain head, then the executed ids in order. Byte-exact across replicas.</summary>
    public byte[] TakeSnapshot()
    {
        var bytes = new byte[8 + 8 + Digest.Size + 4 + (_executed.Count * 12)];
        var s = bytes.AsSpan();
        BinaryPrimitives.WriteInt64LittleEndian(s, _lastConsensusId);
        BinaryPrimitives.WriteInt64LittleEndian(s[8..], _lastTimestamp);
        _head.CopyTo(s[16..]);
        BinaryPrimitives.WriteInt32LittleEndian(s[48..], _executed.Count);
        var at = 52;
        foreach (var id in _executed)
        {
            BinaryPrimitives.WriteInt32LittleEndian(s[at..], id.Client);
            BinaryPrimitives.WriteInt64LittleEndian(s[(at + 4)..], id.Sequence);
            at += 12;
        }
        return bytes;
    }

    public void RestoreSnapshot(ReadOnlySpan<byte> snapshot)
    {
        if (snapshot.Length < 52)
        {
            throw new ArgumentException("ledger snapshot too short", nameof(snapshot));
        }
        var count = BinaryPrimitives.ReadInt32LittleEndian(snapshot[48..]);
        if (count < 0 || snapshot.Length != 52 + (count * 12))
        {
            throw new ArgumentException("ledger snapshot has the wrong length", nameof(snapshot));
        }
        _lastConsensusId = BinaryPrimitives.ReadInt64LittleEndian(snapshot);
        _lastTimestamp = BinaryPrimitives.ReadInt64LittleEndian(snapshot[8..]);
        _head = new Digest(snapshot.Slice(16, Digest.Size));
        _executed.Clear();
        for (var i = 0; i < count; i++)
        {
            var at = 52 + (i * 12);
            _executed.Add(new RequestId(BinaryPrimitives.ReadInt32LittleEndian(snapshot[at..]), BinaryPrimitives.ReadInt64LittleEndian(snapshot[(at + 4)..])));
        }
        observer.OnRestored(replica, _lastConsensusId, _head);
    }
}
