using SieveQ.Bft.Protocol;
using SieveQ.Core.Envelope;
using SieveQ.Core.Filtering;
using SieveQ.Core.Sender;

namespace SieveQ.Core.Tests;

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
}
