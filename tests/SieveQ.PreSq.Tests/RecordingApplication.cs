using System.Collections.Concurrent;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Core.Envelope;

namespace SieveQ.PreSq.Tests;

/// <summary>
/// The replicated side of the test: a real ordering application that decodes every ordering request it
/// executes and keeps its items, so tests can see exactly what a pre-SQ forwarded. Its result is what
/// the sieve's replicas return (accepted = every item), identical on every replica.
/// </summary>
internal sealed class RecordingApplication : IReplicatedApplication
{
    private readonly ConcurrentQueue<(int Client, int Origin, byte[] Item)> _items = new();
    private long _executed;

    public IReadOnlyList<(int Client, int Origin, byte[] Item)> Items => [.. _items];

    public long Executed => Interlocked.Read(ref _executed);

    public IReadOnlyList<byte[]> Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
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
            foreach (var item in decoded.Items)
            {
                _items.Enqueue((request.From, decoded.Origin, item.ToArray()));
            }
            results.Add(ExecuteResultCodec.Encode(new ExecuteResult(decoded.Items.Count, 0, 0)));
        }
        return results;
    }

    public byte[] TakeSnapshot() => BitConverter.GetBytes(Executed);

    public void RestoreSnapshot(ReadOnlySpan<byte> snapshot)
    {
    }
}
