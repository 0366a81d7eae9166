using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// Turns an agreed output batch into this replica's frames (kind 0x20). A batch whose bodies would
/// exceed a frame budget is split into several frames with the same batch number, each with its own
/// MAC: the post-SQ votes item by item, so the split changes nothing for it, and designation stays
/// tied to the agreed batch number. Frames never exceed what a gRPC peer accepts by default.
/// </summary>
internal sealed class OutputFrames
{
    private readonly int _replica;
    private readonly int _replicaCount;
    private readonly int _maxBodyBytes;
    private readonly IOutputBodyStage? _bodies;
    private readonly IReceiverOutputGate? _gate;

    /// <param name="bodies">Null in the product; a test's compromised replica-SQ alters what it streams here.</param>
    /// <param name="gate">Null in the product; a test's compromised replica-SQ withholds frames here.</param>
    public OutputFrames(int replica, int replicaCount, int maxBodyBytes, IOutputBodyStage? bodies = null, IReceiverOutputGate? gate = null)
    {
        _replica = replica;
        _replicaCount = replicaCount;
        _maxBodyBytes = maxBodyBytes;
        _bodies = bodies;
        _gate = gate;
    }

    /// <summary>A live batch: bodies only where this replica is the designated one.</summary>
    public IEnumerable<byte[]> Live(OutboxBatch batch, MacKeyRing ring)
    {
        var withBodies = ReplicaOutputRenderer.IsDesignated(batch.BatchNo, batch.Receiver, _replica, _replicaCount);
        return Render(batch, withBodies, ring);
    }

    /// <summary>A retransmission (batch number 0): always with bodies, since no designated replica is implied.</summary>
    public IEnumerable<byte[]> Retransmission(OutboxBatch batch, MacKeyRing ring) => Render(batch, withBodies: true, ring);

    private IEnumerable<byte[]> Render(OutboxBatch batch, bool withBodies, MacKeyRing ring)
    {
        if (_gate?.Sends(batch) == false)
        {
            yield break;
        }
        if (!withBodies)
        {
            // Digest-only items are ~60 bytes; even the largest agreed batch fits one frame.
            yield return ReplicaOutputRenderer.Render(batch, _replica, withBodies: false, ring);
            yield break;
        }
        foreach (var part in Split(batch))
        {
            yield return ReplicaOutputRenderer.Render(_bodies?.Stream(part) ?? part, _replica, withBodies: true, ring);
        }
    }

    private IEnumerable<OutboxBatch> Split(OutboxBatch batch)
    {
        long total = 0;
        foreach (var i in batch.Items)
        {
            total += i.Data.Length;
        }
        if (total <= _maxBodyBytes)
        {
            yield return batch;
            yield break;
        }
        var part = new List<QueuedItem>();
        long bytes = 0;
        foreach (var item in batch.Items)
        {
            if (part.Count > 0 && bytes + item.Data.Length > _maxBodyBytes)
            {
                yield return batch with { Items = part };
                part = [];
                bytes = 0;
            }
            part.Add(item);
            bytes += item.Data.Length;
        }
        if (part.Count > 0)
        {
            yield return batch with { Items = part };
        }
    }
}
