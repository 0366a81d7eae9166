using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;

namespace SieveQ.PreSq.Tests;

/// <summary>
/// The replicated side of the test: a real ordering application that decodes every ordering request it
/// executes and keeps its items, so tests can see exactly what a pre-SQ forwarded. Its result is what
/// the sieve's replicas return (accepted = every item), identical on every replica. The items are its
/// replicated state: a replica that falls behind on a loaded machine and catches up by state transfer
/// installs them from the checkpoint instead of missing the instances it skipped.
/// </summary>
internal sealed class RecordingApplication : IReplicatedApplication
{
    private readonly Lock _lock = new();
    private List<(int Client, int Origin, byte[] Item)> _items = [];
    private long _executed;

    public IReadOnlyList<(int Client, int Origin, byte[] Item)> Items
    {
        get
        {
            lock (_lock)
            {
                return [.. _items];
            }
        }
    }

    public long Executed => Interlocked.Read(ref _executed);

    public ExecutionOutcome Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
    {
        var results = new List<byte[]>(requests.Count);
        foreach (var request in requests)
        {
            Interlocked.Increment(ref _executed);
            OrderingRequest decoded;
            try
            {
                decoded = OrderingRequestCodec.Decode(request.Payload);
            }
            catch (MalformedEnvelopeException)
            {
                results.Add(ExecuteResultCodec.Encode(new ExecuteResult(0, 0, 0)));
                continue;
            }
            lock (_lock)
            {
                foreach (var item in decoded.Items)
                {
                    _items.Add((request.From, decoded.Origin, item.ToArray()));
                }
            }
            results.Add(ExecuteResultCodec.Encode(new ExecuteResult(decoded.Items.Count, 0, 0)));
        }
        return new ExecutionOutcome(results);
    }

    /// <summary>i64 executed | i32 count | per item: i32 client | i32 origin | i32 length | bytes.</summary>
    public byte[] TakeSnapshot()
    {
        using var ms = new MemoryStream();
        using var w = new BinaryWriter(ms);
        lock (_lock)
        {
            w.Write(Executed);
            w.Write(_items.Count);
            foreach (var (client, origin, item) in _items)
            {
                w.Write(client);
                w.Write(origin);
                w.Write(item.Length);
                w.Write(item);
            }
        }
        w.Flush();
        return ms.ToArray();
    }

    public void RestoreSnapshot(ReadOnlySpan<byte> snapshot)
    {
        using var r = new BinaryReader(new MemoryStream(snapshot.ToArray()));
        var executed = r.ReadInt64();
        var count = r.ReadInt32();
        var items = new List<(int, int, byte[])>(count);
        for (var i = 0; i < count; i++)
        {
            var client = r.ReadInt32();
            var origin = r.ReadInt32();
            items.Add((client, origin, r.ReadBytes(r.ReadInt32())));
        }
        lock (_lock)
        {
            _items = items;
            Interlocked.Exchange(ref _executed, executed);
        }
    }
}
