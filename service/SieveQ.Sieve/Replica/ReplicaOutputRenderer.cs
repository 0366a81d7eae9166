using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// Turns agreed outbox entries into this replica's bytes: adds its id, the body only where it is the
/// designated replica, and the MAC with its own key for the peer. This is the only per-replica step.
/// </summary>
public static class ReplicaOutputRenderer
{
    /// <summary>Designation rotates with the agreed batch number (offset by receiver to spread load).</summary>
    public static bool IsDesignated(long batchNo, int receiver, int replica, int replicaCount) =>
        (int)((batchNo + receiver) % replicaCount) == replica;

    public static int DesignatedReplica(long batchNo, int receiver, int replicaCount) => (int)((batchNo + receiver) % replicaCount);

    public static byte[] Render(OutboxBatch batch, int replica, int replicaCount, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(batch);
        var withBody = IsDesignated(batch.BatchNo, batch.Receiver, replica, replicaCount);
        return Render(batch, replica, withBody, ring);
    }

    /// <summary>Renders with or without bodies regardless of designation (retransmission, body fetch fallbacks).</summary>
    public static byte[] Render(OutboxBatch batch, int replica, bool withBodies, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(batch);
        var items = new OutputItem[batch.Items.Count];
        for (var i = 0; i < items.Length; i++)
        {
            var q = batch.Items[i];
            items[i] = new OutputItem(q.Sender, q.SenderSeq, q.RouteSeq, q.DataDigest, withBodies ? (ReadOnlyMemory<byte>?)q.Data : null);
        }
        return ReplicaOutputCodec.Encode(replica, batch.Receiver, batch.BatchNo, items, ring);
    }

    public static byte[] Render(OutboxAckResponse ack, int replica, MacKeyRing ring)
    {
        ArgumentNullException.ThrowIfNull(ack);
        return AckResponseCodec.Encode(replica, ack.Sender, ack.LossPpm, ack.DeliveredUpTo, ack.AssignedPreSq, ack.Nonce, ack.VerdictsFrom, ack.Rejections, ring);
    }
}
