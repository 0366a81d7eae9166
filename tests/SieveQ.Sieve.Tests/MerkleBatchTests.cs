using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sieve.Tests;

public sealed class MerkleBatchTests : IClassFixture<TestWorld>
{
    private readonly TestWorld _w;

    public MerkleBatchTests(TestWorld w) => _w = w;

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(5)]
    [InlineData(7)]
    [InlineData(8)]
    [InlineData(33)]
    public void Every_path_leads_to_the_root(int count)
    {
        var leaves = Enumerable.Range(0, count).Select(i => MerkleBatch.Leaf(BitConverter.GetBytes(i))).ToList();
        var tree = MerkleBatch.Build(leaves);
        for (var i = 0; i < count; i++)
        {
            Assert.True(MerkleBatch.TryComputeRoot(leaves[i], i, count, tree.Path(i), out var root));
            Assert.Equal(tree.Root, root);
            // Wrong index, wrong count or wrong leaf must not reach the same root.
            if (count > 1)
            {
                Assert.False(MerkleBatch.TryComputeRoot(leaves[i], (i + 1) % count, count, tree.Path(i), out var r2) && r2 == tree.Root);
                Assert.False(MerkleBatch.TryComputeRoot(leaves[(i + 1) % count], i, count, tree.Path(i), out var r3) && r3 == tree.Root);
            }
            Assert.False(MerkleBatch.TryComputeRoot(leaves[i], i, count, [.. tree.Path(i), .. new byte[32]], out _));
        }
    }

    [Fact]
    public void Odd_node_is_promoted_not_duplicated()
    {
        var leaves = Enumerable.Range(0, 3).Select(i => MerkleBatch.Leaf([(byte)i])).ToList();
        var three = MerkleBatch.Build(leaves);
        Assert.Equal(MerkleBatch.Node(MerkleBatch.Node(leaves[0], leaves[1]), leaves[2]), three.Root);
        // Bitcoin's duplication would make [a, b, c] and [a, b, c, c] share a root.
        var four = MerkleBatch.Build([.. leaves, leaves[2]]);
        Assert.NotEqual(three.Root, four.Root);
    }

    [Fact]
    public void Leaf_and_node_hashes_are_domain_separated()
    {
        var a = MerkleBatch.Leaf([1]);
        var b = MerkleBatch.Leaf([2]);
        var pair = new byte[64];
        a.CopyTo(pair);
        b.CopyTo(pair.AsSpan(32));
        Assert.NotEqual(MerkleBatch.Node(a, b), MerkleBatch.Leaf(pair));
    }

    [Fact]
    public void Batch_signed_messages_verify_individually_and_bad_paths_fail()
    {
        var regions = Enumerable.Range(1, 5).Select(i => SenderMessageCodec.EncodeSignedRegion(1, i, 100, [(byte)i])).ToList();
        var signed = BatchSigner.Sign(1, regions, _w.SenderSigning[1]);
        var check = new SenderSignatureCheck(_w.Keys);
        foreach (var m in signed)
        {
            Assert.Equal(SignatureVerdict.Valid, check.Verify(SenderMessageCodec.Decode(m)));
        }
        // Flip a byte in the path of message 2.
        var bad = signed[2].ToArray();
        var decoded = SenderMessageCodec.Decode(bad);
        var pathOffset = decoded.SignedRegion.Length + 1 + 4 + 4 + 1;
        bad[pathOffset] ^= 1;
        Assert.Equal(SignatureVerdict.BadSignature, check.Verify(SenderMessageCodec.Decode(bad)));
        // Claim a different batch size: the path no longer has the shape the count dictates.
        var wrongCount = SenderMessageCodec.Encode(decoded.SignedRegion.Span, decoded.Auth with { LeafCount = 64 });
        Assert.Equal(SignatureVerdict.BadMerklePath, check.Verify(SenderMessageCodec.Decode(wrongCount)));
        // Change the DATA under a valid path.
        var data = signed[0].ToArray();
        data[SenderMessageCodec.HeaderBytes] ^= 1;
        Assert.Equal(SignatureVerdict.BadSignature, check.Verify(SenderMessageCodec.Decode(data)));
    }

    [Fact]
    public void The_node_memo_computes_each_inner_node_of_a_flush_once_and_returns_what_Node_returns()
    {
        var regions = Enumerable.Range(1, 256).Select(i => SenderMessageCodec.EncodeSignedRegion(1, i, 100, [(byte)i, 7])).ToList();
        var signed = BatchSigner.Sign(1, regions, _w.SenderSigning[1]);
        var memo = new MerkleNodeMemo();
        var check = new SenderSignatureCheck(_w.Keys, memo);
        foreach (var m in signed)
        {
            Assert.Equal(SignatureVerdict.Valid, check.Verify(SenderMessageCodec.Decode(m)));
        }
        // 256 leaves have 255 inner nodes; every message climbs 8 levels, and only the first climb through a node computes it.
        Assert.Equal(255, memo.Misses);
        Assert.Equal((256 * 8) - 255, memo.Hits);
        var a = MerkleBatch.Leaf("a"u8);
        var b = MerkleBatch.Leaf("b"u8);
        Assert.Equal(MerkleBatch.Node(a, b), memo.Node(a, b));
        Assert.Equal(MerkleBatch.Node(b, a), memo.Node(b, a));
    }

    [Fact]
    public void A_warm_memo_and_root_cache_give_the_verdicts_of_a_fresh_check()
    {
        var regions = Enumerable.Range(1, 16).Select(i => SenderMessageCodec.EncodeSignedRegion(1, i, 100, [(byte)i])).ToList();
        var signed = BatchSigner.Sign(1, regions, _w.SenderSigning[1]);
        var warm = new SenderSignatureCheck(_w.Keys);
        foreach (var m in signed)
        {
            warm.Verify(SenderMessageCodec.Decode(m));
        }
        var pathOffset = SenderMessageCodec.Decode(signed[5]).SignedRegion.Length + 1 + 4 + 4 + 1;
        var variants = new List<byte[]>();
        for (var level = 0; level < 4; level++)
        {
            var bad = signed[5].ToArray();
            bad[pathOffset + (level * Digest.Size)] ^= 0x40;  // a sibling high up the path: the lower nodes are all remembered
            variants.Add(bad);
        }
        var data = signed[9].ToArray();
        data[SenderMessageCodec.HeaderBytes] ^= 1;
        variants.Add(data);
        var signature = signed[3].ToArray();
        signature[^1] ^= 1;
        variants.Add(signature);
        foreach (var v in variants.Concat(signed.Select(m => m.ToArray())))
        {
            var fresh = new SenderSignatureCheck(_w.Keys).Verify(SenderMessageCodec.Decode(v));
            Assert.Equal(fresh, warm.Verify(SenderMessageCodec.Decode(v)));
        }
        Assert.All(variants, v => Assert.NotEqual(SignatureVerdict.Valid, warm.Verify(SenderMessageCodec.Decode(v))));
    }
}
