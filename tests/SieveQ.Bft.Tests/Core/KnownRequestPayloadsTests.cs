using SieveQ.Bft.Codec;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>
/// A follower's PROPOSE decode shares the payload arrays it already received from the clients. Sharing
/// must never change what is decoded: only identical bytes are shared, and the batch hash is the same.
/// </summary>
public sealed class KnownRequestPayloadsTests
{
    private static Batch SampleBatch(int requests, int seed)
    {
        var rng = new Random(seed);
        return new Batch(rng.NextInt64(0, long.MaxValue), Enumerable.Range(0, requests).Select(i =>
        {
            var payload = new byte[rng.Next(1, 600)];
            rng.NextBytes(payload);
            return new ClientRequest(4 + (i % 3), 100 + i, payload);
        }).ToArray());
    }

    [Fact]
    public void A_propose_shares_the_payloads_received_from_clients_and_decodes_the_same_batch()
    {
        var batch = SampleBatch(20, 1);
        var known = new KnownRequestPayloads();
        // What arrived from the clients: copies, as a client link would have decoded them.
        var received = batch.Requests.Select(r => r.Payload.ToArray()).ToArray();
        for (var i = 0; i < batch.Requests.Count; i++)
        {
            known.Remember(batch.Requests[i].From, batch.Requests[i].Sequence, received[i]);
        }
        var frame = MessageCodec.Encode(new Propose(0, 1, 7, batch));

        var shared = (Propose)MessageCodec.Decode(frame, known);
        var plain = (Propose)MessageCodec.Decode(frame);

        Assert.Equal(plain.Value.Hash, shared.Value.Hash);
        Assert.Equal(batch.Hash, shared.Value.Hash);
        for (var i = 0; i < batch.Requests.Count; i++)
        {
            Assert.Same(received[i], shared.Value.Requests[i].Payload);
            Assert.Equal(plain.Value.Requests[i], shared.Value.Requests[i] with { Payload = plain.Value.Requests[i].Payload });
            Assert.Equal(plain.Value.Requests[i].Payload, shared.Value.Requests[i].Payload);
        }
        Assert.Equal(20, known.Shared);
        Assert.Equal(0, known.Copied);
        Assert.Equal(0, known.Entries); // each is taken when shared
        Assert.Equal(0, known.Bytes);
    }

    [Fact]
    public void Different_bytes_under_the_same_request_id_are_copied_not_shared()
    {
        var batch = SampleBatch(3, 2);
        var known = new KnownRequestPayloads();
        var forged = batch.Requests[1].Payload.ToArray();
        forged[0] ^= 1;
        known.Remember(batch.Requests[1].From, batch.Requests[1].Sequence, forged);

        var decoded = (Propose)MessageCodec.Decode(MessageCodec.Encode(new Propose(0, 1, 7, batch)), known);

        Assert.NotSame(forged, decoded.Value.Requests[1].Payload);
        Assert.Equal(batch.Requests[1].Payload, decoded.Value.Requests[1].Payload);
        Assert.Equal(batch.Hash, decoded.Value.Hash);
        Assert.Equal(0, known.Shared);
        Assert.Equal(3, known.Copied);
    }

    [Fact]
    public void Unshared_payloads_age_out_by_generation_within_the_entry_and_byte_bounds()
    {
        var known = new KnownRequestPayloads(maxEntries: 4, maxBytes: 1_000);
        for (var i = 0; i < 4; i++)
        {
            known.Remember(4, i, new byte[10]);
        }
        Assert.Equal(4, known.Entries);
        known.Remember(4, 4, new byte[10]); // the first generation is full: it becomes the older one
        Assert.Equal(5, known.Entries);
        for (var i = 5; i < 9; i++)
        {
            known.Remember(4, i, new byte[10]);
        }
        Assert.Equal(4, known.Aged);     // the first four, never shared, are gone
        Assert.Equal(5, known.Entries);
        Assert.True(known.Bytes <= 2 * 1_000);
        known.Remember(5, 0, new byte[999]);
        known.Remember(5, 1, new byte[999]); // over the byte bound: rotates again
        Assert.True(known.Bytes <= 2 * 1_000);
        Assert.True(known.Entries <= 2 * 4);
    }
}
