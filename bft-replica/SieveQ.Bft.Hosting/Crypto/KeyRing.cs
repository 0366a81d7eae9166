using System.Security.Cryptography;
using SieveQ.Bft.Hosting.Config;

namespace SieveQ.Bft.Hosting.Crypto;

/// <summary>
/// The pinned public keys of every replica and client, by node id. Verification keys are cloned per thread
/// because the link handshakes and the proof checks run on many threads at once and an ECDsa object's
/// thread-safety is not documented.
/// </summary>
public sealed class KeyRing
{
    private readonly Dictionary<int, byte[]> _spki = [];
    private readonly ThreadLocal<Dictionary<int, ECDsa>> _perThread;

    public KeyRing(ClusterConfig config)
    {
        foreach (var r in config.Replicas)
        {
            _spki[r.Id] = Convert.FromBase64String(r.PublicKey);
        }
        foreach (var c in config.Clients)
        {
            _spki[c.Id] = Convert.FromBase64String(c.PublicKey);
        }
        _perThread = new ThreadLocal<Dictionary<int, ECDsa>>(() => []);
    }

    public bool Knows(int nodeId) => _spki.ContainsKey(nodeId);

    public bool Verify(int nodeId, ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature)
    {
        var key = KeyFor(nodeId);
        return key is not null && key.VerifyData(data, signature, HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
    }

    private ECDsa? KeyFor(int nodeId)
    {
        var cache = _perThread.Value!;
        if (cache.TryGetValue(nodeId, out var k))
        {
            return k;
        }
        if (!_spki.TryGetValue(nodeId, out var spki))
        {
            return null;
        }
        k = ECDsa.Create();
        k.ImportSubjectPublicKeyInfo(spki, out _);
        cache[nodeId] = k;
        return k;
    }
}
