using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>The chunked state-transfer messages round-trip, and the decoder refuses every length out of its bounds.</summary>
public class StateChunkCodecTests
{
    private static readonly StateManifest Manifest = StateManifest.Of(new byte[700], 256);

    [Fact]
    public void State_reply_chunk_request_and_chunk_round_trip()
    {
        var reply = new StateReply(1, 128, Digest.Compute([1]), Manifest.Root, Manifest, [], 64, Digest.Compute([2]), Digest.Compute([3]));
        var back = Assert.IsType<StateReply>(MessageCodec.Decode(MessageCodec.Encode(reply)));
        Assert.Equal(Manifest.Root, back.Manifest!.Root);
        Assert.Equal((reply.ManifestRoot, reply.PreviousManifestRoot), (back.ManifestRoot, back.PreviousManifestRoot));

        var chunk = new StateChunk(2, 128, 2, true, new byte[] { 1, 2, 3 });
        var chunkBack = Assert.IsType<StateChunk>(MessageCodec.Decode(MessageCodec.Encode(chunk)));
        Assert.Equal([1, 2, 3], chunkBack.Data.ToArray());
        Assert.Equal(new StateChunkRequest(3, 128, 7), MessageCodec.Decode(MessageCodec.Encode(new StateChunkRequest(3, 128, 7))));
    }

    public static TheoryData<string, StateManifest> BadManifests => new()
    {
        { "2 chunks for 700 bytes", Manifest with { ChunkHashes = Manifest.ChunkHashes.Take(2).ToArray() } },
        { "chunk size", new StateManifest(100, WireLimits.MinStateChunkBytes - 1, [default]) },
        { "chunk size", new StateManifest(100, WireLimits.MaxStateChunkBytes + 1, [default]) },
        { "state length", new StateManifest(WireLimits.MaxStateBytes + 1, WireLimits.MaxStateChunkBytes, new Digest[17]) },
    };

    [Theory]
    [MemberData(nameof(BadManifests))]
    public void A_manifest_out_of_bounds_or_inconsistent_is_refused(string problem, StateManifest manifest)
    {
        var frame = MessageCodec.Encode(new StateReply(1, 128, default, default, manifest, []));
        var e = Assert.Throws<MalformedMessageException>(() => MessageCodec.Decode(frame));
        Assert.Contains(problem, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_refusal_with_data_an_index_beyond_the_limit_and_an_oversized_chunk_are_refused()
    {
        Assert.Throws<MalformedMessageException>(() => MessageCodec.Decode(MessageCodec.Encode(new StateChunk(1, 5, 0, false, new byte[] { 1 }))));
        Assert.Throws<MalformedMessageException>(() => MessageCodec.Decode(MessageCodec.Encode(new StateChunkRequest(1, 5, WireLimits.MaxStateChunks))));
        Assert.Throws<MalformedMessageException>(() => MessageCodec.Decode(MessageCodec.Encode(new StateChunk(1, 5, 0, true, new byte[WireLimits.MaxStateChunkBytes + 1]))));
        var truncated = MessageCodec.Encode(new StateChunk(1, 5, 0, true, new byte[10]))[..^1];
        Assert.Throws<MalformedMessageException>(() => MessageCodec.Decode(truncated));
    }
}
