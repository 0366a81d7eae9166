using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>
/// The batch hash is what WRITE signatures and ACCEPTs vote on, so its two fast paths (streamed for a
/// batch built here, taken over the received bytes for a decoded one) must equal the hash of the
/// canonical encoding, or correct replicas would vote on different digests for one value.
/// </summary>
public sealed class BatchHashTests
{
    public static TheoryData<int, int> Shapes => new() { { 0, 0 }, { 1, 0 }, { 1, 500 }, { 7, 3 }, { 300, 4_000 } };

    [Theory]
    [MemberData(nameof(Shapes))]
    public void Streamed_and_decoded_hashes_equal_the_hash_of_the_canonical_bytes(int requests, int payloadBytes)
    {
        var rng = new Random(requests * 31 + payloadBytes);
        var batch = new Batch(
            rng.NextInt64(0, long.MaxValue),
            Enumerable.Range(0, requests).Select(i =>
            {
                var payload = new byte[rng.Next(0, payloadBytes + 1)];
                rng.NextBytes(payload);
                return new ClientRequest(rng.Next(4, int.MaxValue), rng.NextInt64(0, long.MaxValue), payload) { Proof = RandomProof(rng) };
            }).ToArray());
        var canonical = Digest.Compute(BatchCodec.Encode(batch));

        Assert.Equal(canonical, batch.Hash);
        Assert.Equal(canonical, BatchCodec.Decode(BatchCodec.Encode(batch)).Hash);
        var propose = (Propose)MessageCodec.Decode(MessageCodec.Encode(new Propose(0, 3, 9, batch)));
        Assert.Equal(canonical, propose.Value.Hash);
    }

    [Fact]
    public void Batches_differing_in_any_field_hash_differently()
    {
        var a = new Batch(1, [new ClientRequest(10, 1, [1, 2])]);
        var variants = new[]
        {
            new Batch(2, [new ClientRequest(10, 1, [1, 2])]),
            new Batch(1, [new ClientRequest(11, 1, [1, 2])]),
            new Batch(1, [new ClientRequest(10, 2, [1, 2])]),
            new Batch(1, [new ClientRequest(10, 1, [1, 3])]),
            new Batch(1, [new ClientRequest(10, 1, [1, 2, 0])]),
            new Batch(1, [new ClientRequest(10, 1, [1, 2]), new ClientRequest(10, 2, [])]),
            new Batch(1, [new ClientRequest(10, 1, [1, 2]) { Proof = [0] }]),
        };
        Assert.All(variants, v => Assert.NotEqual(a.Hash, v.Hash));
    }

    private static byte[] RandomProof(Random rng)
    {
        var proof = new byte[rng.Next(0, 2) * 64];
        rng.NextBytes(proof);
        return proof;
    }

    [Fact]
    public void A_requests_proof_survives_every_encoding_that_carries_the_request()
    {
        var r = new ClientRequest(7, 42, [1, 2, 3]) { Proof = [.. Enumerable.Range(0, 64).Select(i => (byte)i)] };
        Assert.Equal(r.Proof, ((ClientRequest)MessageCodec.Decode(MessageCodec.Encode(r))).Proof);
        Assert.Equal(r.Proof, ((Forward)MessageCodec.Decode(MessageCodec.Encode(new Forward(1, [r])))).Requests[0].Proof);
        Assert.Equal(r.Proof, ((Stop)MessageCodec.Decode(MessageCodec.Encode(new Stop(1, 2, [r])))).TimedOut[0].Proof);
        Assert.Equal(r.Proof, BatchCodec.Decode(BatchCodec.Encode(new Batch(5, [r]))).Requests[0].Proof);
    }

    [Fact]
    public void A_proof_longer_than_the_limit_is_refused_by_the_decoder()
    {
        var r = new ClientRequest(7, 42, [1]) { Proof = new byte[WireLimits.MaxRequestProofBytes + 1] };
        var e = Assert.Throws<MalformedMessageException>(() => MessageCodec.Decode(MessageCodec.Encode(r)));
        Assert.Contains("request proof", e.Message, StringComparison.Ordinal);
        Assert.Throws<MalformedMessageException>(() => BatchCodec.Decode(BatchCodec.Encode(new Batch(5, [r]))));
    }

    [Fact]
    public void The_signed_bytes_of_a_request_bind_client_number_and_payload_under_their_own_tag()
    {
        var a = SigningBytes.ForRequest(7, 42, [1, 2, 3]);
        Assert.Equal(SigningBytes.RequestBytes, a.Length);
        Assert.StartsWith("SQBFT/REQUEST/v1", System.Text.Encoding.ASCII.GetString(a), StringComparison.Ordinal);
        Assert.NotEqual(a, SigningBytes.ForRequest(8, 42, [1, 2, 3]));
        Assert.NotEqual(a, SigningBytes.ForRequest(7, 43, [1, 2, 3]));
        Assert.NotEqual(a, SigningBytes.ForRequest(7, 42, [1, 2, 4]));
    }
}
