using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Crypto;

/// <summary>
/// A stand-in for ECDSA: HMAC-SHA256 under a per-replica secret. Cheap and deterministic, and
/// unforgeable for anyone without the secret, which is all the protocol relies on. A Byzantine
/// replica is handed only its own <see cref="Signer"/>, never the key table.
/// </summary>
internal sealed class SimulatedSignatures : IProofVerifier
{
    private readonly byte[][] _keys;

    public SimulatedSignatures(int replicas, SimRandom rng)
    {
        _keys = Enumerable.Range(0, replicas).Select(_ => rng.Bytes(32)).ToArray();
    }

    public IProofSigner Signer(int replica) => new ReplicaSigner(_keys[replica]);

    public bool Verify(int replica, ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature)
    {
        if (replica < 0 || replica >= _keys.Length || signature.Length != 32)
        {
            return false;
        }
        Span<byte> expected = stackalloc byte[32];
        HMACSHA256.HashData(_keys[replica], data, expected);
        return CryptographicOperations.FixedTimeEquals(expected, signature);
    }

    private sealed class ReplicaSigner(byte[] key) : IProofSigner
    {
        public byte[] Sign(ReadOnlySpan<byte> data) => HMACSHA256.HashData(key, data);
    }
}
