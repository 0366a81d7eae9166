using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Filtering;

public enum SignatureVerdict
{
    Valid,
    BadSignature,
    BadMerklePath,
    UnknownSender,
}

/// <summary>
/// Verifies a sender message's origin: its own signature, or its Merkle path up to a root whose
/// signature is checked once per batch. Root verdicts are cached under the exact bytes the root check
/// reads (sender, leaf count, root and the signature), and inner nodes are remembered by their children
/// (<see cref="MerkleNodeMemo"/>), so a cached verdict is exactly what a fresh check would return.
/// </summary>
public sealed class SenderSignatureCheck
{
    private readonly PublicKeyDirectory _keys;
    private readonly BoundedVerdictCache<ItemKey, bool> _roots;
    private readonly Func<Digest, Digest, Digest> _node;

    public SenderSignatureCheck(PublicKeyDirectory keys, MerkleNodeMemo? nodes = null)
    {
        _keys = keys;
        _roots = new BoundedVerdictCache<ItemKey, bool>(1 << 14);
        _node = (nodes ?? new MerkleNodeMemo()).Node;
    }

    public SignatureVerdict Verify(SenderMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        if (!_keys.IsSender(message.Sender))
        {
            return SignatureVerdict.UnknownSender;
        }
        if (message.Auth.Kind == SenderAuthKind.Signature)
        {
            var input = SenderMessageCodec.SigningInput(message.SignedRegion.Span);
            return _keys.VerifySender(message.Sender, input, message.Auth.Signature.Span) ? SignatureVerdict.Valid : SignatureVerdict.BadSignature;
        }
        var leaf = MerkleBatch.Leaf(message.SignedRegion.Span);
        if (!MerkleBatch.TryComputeRoot(leaf, message.Auth.LeafIndex, message.Auth.LeafCount, message.Auth.Path.Span, _node, out var root))
        {
            return SignatureVerdict.BadMerklePath;
        }
        var rootInput = SenderMessageCodec.RootSigningInput(message.Sender, message.Auth.LeafCount, root);
        var key = ItemKey.Over(Claim(rootInput, message.Auth.Signature.Span));
        if (!_roots.TryGet(key, out var ok))
        {
            ok = _keys.VerifySender(message.Sender, rootInput, message.Auth.Signature.Span);
            _roots.Put(key.Owned(), ok);
        }
        // A path that leads to a root the sender did not sign is indistinguishable from a forged root.
        return ok ? SignatureVerdict.Valid : SignatureVerdict.BadSignature;
    }

    [ThreadStatic]
    private static byte[]? t_claim;

    /// <summary>
    /// The root claim (signing input, then signature) in a per-thread buffer: every message of a flush looks
    /// its root up, and only a miss needs a copy of its own (<see cref="ItemKey.Owned"/>).
    /// </summary>
    private static ReadOnlyMemory<byte> Claim(ReadOnlySpan<byte> rootInput, ReadOnlySpan<byte> signature)
    {
        var length = rootInput.Length + signature.Length;
        var buffer = t_claim is { } b && b.Length >= length ? b : t_claim = new byte[Math.Max(length, 256)];
        rootInput.CopyTo(buffer);
        signature.CopyTo(buffer.AsSpan(rootInput.Length));
        return buffer.AsMemory(0, length);
    }
}
