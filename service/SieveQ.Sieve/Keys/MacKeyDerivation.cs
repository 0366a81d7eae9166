using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Keys;

/// <summary>
/// MAC keys from enrolled static keys: ECDH P-256 between one party's private key and the other's
/// enrolled public key, then HKDF-SHA256 with <c>info = channel tag || u32 firstId || u32 secondId || u32 epoch</c>.
/// Both sides compute the same shared secret, so no MAC key is ever shipped; a new epoch yields an
/// unrelated key without new key pairs. The ids always go in the channel's fixed order (see
/// <see cref="MacChannel"/>), whichever side derives.
/// </summary>
public static class MacKeyDerivation
{
    public static byte[] Derive(MacChannel channel, int firstId, int secondId, uint epoch, ECDiffieHellman ownKey, ReadOnlySpan<byte> peerPublicSpki)
    {
        ArgumentNullException.ThrowIfNull(ownKey);
        using var peer = ECDiffieHellman.Create();
        try
        {
            peer.ImportSubjectPublicKeyInfo(peerPublicSpki, out _);
        }
        catch (CryptographicException e)
        {
            throw new KeyStoreException("peer public key is not a valid P-256 SubjectPublicKeyInfo", e);
        }
        var shared = ownKey.DeriveRawSecretAgreement(peer.PublicKey);
        try
        {
            return HKDF.DeriveKey(HashAlgorithmName.SHA256, shared, MacKeyRing.KeyBytes, salt: [], info: Info(channel, firstId, secondId, epoch));
        }
        finally
        {
            CryptographicOperations.ZeroMemory(shared);
        }
    }

    /// <summary>Convenience: a ring whose current epoch is <paramref name="epoch"/> and, if given, previous is <paramref name="previousEpoch"/>.</summary>
    public static MacKeyRing Ring(MacChannel channel, int firstId, int secondId, uint epoch, ECDiffieHellman ownKey, ReadOnlySpan<byte> peerPublicSpki, uint? previousEpoch = null)
    {
        MacKeyRing ring;
        if (previousEpoch is { } prev)
        {
            ring = new MacKeyRing(prev, Derive(channel, firstId, secondId, prev, ownKey, peerPublicSpki));
            ring.Rotate(epoch, Derive(channel, firstId, secondId, epoch, ownKey, peerPublicSpki));
        }
        else
        {
            ring = new MacKeyRing(epoch, Derive(channel, firstId, secondId, epoch, ownKey, peerPublicSpki));
        }
        return ring;
    }

    private static byte[] Info(MacChannel channel, int firstId, int secondId, uint epoch)
    {
        var tag = channel switch
        {
            MacChannel.SenderPreSq => DomainTags.MacKeySenderPreSq,
            MacChannel.ReplicaReceiver => DomainTags.MacKeyReplicaReceiver,
            MacChannel.ReplicaSender => DomainTags.MacKeyReplicaSender,
            _ => throw new ArgumentOutOfRangeException(nameof(channel)),
        };
        using var w = new CanonicalWriter(tag.Length + 12);
        w.Raw(tag);
        w.Id(firstId);
        w.Id(secondId);
        w.U32(epoch);
        return w.ToArray();
    }
}
