using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Sender;

/// <summary>
/// Signs a group of messages: one message gets its own signature; more get one signature over the
/// Merkle root of their leaves, and each message carries its index and inclusion path. The per-message
/// cost of ECDSA disappears while every message still verifies on its own.
/// </summary>
public static class BatchSigner
{
    /// <param name="signedRegions">Outputs of <see cref="SenderMessageCodec.EncodeSignedRegion"/>, all of one sender.</param>
    public static byte[][] Sign(int sender, IReadOnlyList<byte[]> signedRegions, ECDsa key)
    {
        ArgumentNullException.ThrowIfNull(signedRegions);
        ArgumentNullException.ThrowIfNull(key);
        if (signedRegions.Count == 0)
        {
            return [];
        }
        if (signedRegions.Count == 1)
        {
            return [SenderMessageCodec.SignSingle(signedRegions[0], key)];
        }
        var leaves = signedRegions.Select(r => MerkleBatch.Leaf(r)).ToArray();
        var tree = MerkleBatch.Build(leaves);
        var rootSignature = key.SignData(SenderMessageCodec.RootSigningInput(sender, leaves.Length, tree.Root), HashAlgorithmName.SHA256);
        var encoded = new byte[signedRegions.Count][];
        for (var i = 0; i < encoded.Length; i++)
        {
            encoded[i] = SenderMessageCodec.Encode(signedRegions[i], SenderAuth.InBatch(rootSignature, i, leaves.Length, tree.Path(i)));
        }
        return encoded;
    }
}
