using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Crypto;

/// <summary>
/// A stand-in for the clients' ECDSA keys: HMAC-SHA256 under a per-client secret. The clients sign their
/// requests through <see cref="Signer"/> exactly where production signs them (the ordering client), and the
/// replica hosts check them with the same <see cref="AuthenticatedRequestVerifier"/> production runs. Byzantine
/// behaviours never see the secrets, so a request they make up in a client's name cannot verify.
/// </summary>
internal sealed class SimulatedClientKeys : IClientProofVerifier
{
    public const int ProofBytes = 32;
    private readonly Dictionary<int, byte[]> _keys = [];

    public SimulatedClientKeys(IEnumerable<int> clientIds, SimRandom rng)
    {
        foreach (var id in clientIds)
        {
            _keys[id] = rng.Bytes(32);
        }
    }

    public IProofSigner Signer(int client) => new ClientSigner(_keys[client]);

    public bool Verify(int client, ReadOnlySpan<byte> data, ReadOnlySpan<byte> proof)
    {
        if (!_keys.TryGetValue(client, out var key) || proof.Length != ProofBytes)
        {
            return false;
        }
        Span<byte> expected = stackalloc byte[ProofBytes];
        HMACSHA256.HashData(key, data, expected);
        return CryptographicOperations.FixedTimeEquals(expected, proof);
    }

    private sealed class ClientSigner(byte[] key) : IProofSigner
    {
        public byte[] Sign(ReadOnlySpan<byte> data) => HMACSHA256.HashData(key, data);
    }
}
