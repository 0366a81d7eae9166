using System.Security.Cryptography;
using SieveQ.Bft.Core;

namespace SieveQ.Bft.Hosting.Crypto;

/// <summary>Signs WRITE / STOPDATA proofs with the replica's identity key (IEEE P1363, 64 bytes for P-256).</summary>
public sealed class EcdsaProofSigner(IdentityKey identity) : IProofSigner
{
    private readonly Lock _lock = new();

    public byte[] Sign(ReadOnlySpan<byte> data)
    {
        // The core calls this from its single thread; the lock only guards against a host that shares the key.
        lock (_lock)
        {
            return identity.Key.SignData(data, HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        }
    }
}

/// <summary>Checks proof signatures against the pinned replica keys; safe to call from many threads.</summary>
public sealed class EcdsaProofVerifier(KeyRing keys, int replicaCount) : IProofVerifier
{
    public bool Verify(int replica, ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature) =>
        replica >= 0 && replica < replicaCount && signature.Length == 64 && keys.Verify(replica, data, signature);
}

/// <summary>Checks client request proofs against the client keys the cluster config pins; ids below the replica count are never clients.</summary>
public sealed class EcdsaClientProofVerifier(KeyRing keys, int replicaCount) : IClientProofVerifier
{
    public bool Verify(int client, ReadOnlySpan<byte> data, ReadOnlySpan<byte> proof) =>
        client >= replicaCount && proof.Length == 64 && keys.Verify(client, data, proof);
}
