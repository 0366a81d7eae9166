using System.Security.Cryptography;
using SieveQ.Bft.Protocol;
using SieveQ.Core.Envelope;
using SieveQ.Core.Keys;

namespace SieveQ.Core.Filtering;

public enum SignatureVerdict
{
    Valid,
    BadSignature,
    BadMerklePath,
    UnknownSender,
}

/// <summary>
/// Verifies a sender message's origin: its own signature, or its Merkle path up to a root whose
/// signature is checked once per batch. Root verdicts are cached under a hash of everything the
/// root check reads (sender, leaf count, root and the signature bytes), so the cached verdict is
/// exactly what a fresh check would return.
/// </summary>
public sealed class SenderSignatureCheck
{
    private readonly PublicKeyDirectory _keys;
    private readonly BoundedVerdictCache<Digest, bool> _roots;

    public SenderSignatureCheck(PublicKeyDirectory keys, BoundedVerdictCache<Digest, bool>? rootCache = null)
    {
        _keys = keys;
        _roots = rootCache ?? new BoundedVerdictCache<Digest, bool>(1 << 14);
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
        if (!MerkleBatch.TryComputeRoot(leaf, message.Auth.LeafIndex, message.Auth.LeafCount, message.Auth.Path.Span, out var root))
        {
            return SignatureVerdict.BadMerklePath;
        }
        var rootInput = SenderMessageCodec.RootSigningInput(message.Sender, message.Auth.LeafCount, root);
        var key = RootKey(rootInput, message.Auth.Signature.Span);
        if (!_roots.TryGet(key, out var ok))
        {
            ok = _keys.VerifySender(message.Sender, rootInput, message.Auth.Signature.Span);
            _roots.Put(key, ok);
        }
        // A path that leads to a root the sender did not sign is indistinguishable from a forged root.
        return ok ? SignatureVerdict.Valid : SignatureVerdict.BadSignature;
    }

    private static Digest RootKey(ReadOnlySpan<byte> rootInput, ReadOnlySpan<byte> signature)
    {
        Span<byte> buf = stackalloc byte[rootInput.Length + signature.Length];
        rootInput.CopyTo(buf);
        signature.CopyTo(buf[rootInput.Length..]);
        Span<byte> h = stackalloc byte[32];
        SHA256.HashData(buf, h);
        return new Digest(h);
    }
}
