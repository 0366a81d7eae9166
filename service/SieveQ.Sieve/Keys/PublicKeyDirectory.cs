using System.Security.Cryptography;

namespace SieveQ.Sieve.Keys;

/// <summary>
/// Verification side of an <see cref="Enrolment"/>: checks ECDSA signatures of senders and receivers.
/// Parsed public keys are cached per thread because .NET does not promise that one key object may
/// verify on several threads at once, and the replica host verifies on a worker pool.
/// </summary>
public sealed class PublicKeyDirectory : IDisposable
{
    private readonly Dictionary<int, byte[]> _senderKeys;
    private readonly Dictionary<int, byte[]> _receiverKeys;
    private readonly ThreadLocal<Dictionary<(bool Receiver, int Id), ECDsa>> _parsed = new(() => [], trackAllValues: true);

    public PublicKeyDirectory(Enrolment enrolment)
    {
        ArgumentNullException.ThrowIfNull(enrolment);
        Enrolment = enrolment;
        _senderKeys = enrolment.Senders.ToDictionary(s => s.Id, s => s.SignaturePublicKey);
        _receiverKeys = enrolment.Receivers.ToDictionary(s => s.Id, s => s.SignaturePublicKey);
        PreSqIds = enrolment.PreSqs.Select(p => p.Id).Order().ToArray();
    }

    public Enrolment Enrolment { get; }

    /// <summary>Enrolled pre-SQ ids, ascending (the order replicas pick reassignment targets in).</summary>
    public IReadOnlyList<int> PreSqIds { get; }

    public int SenderCount => _senderKeys.Count;

    public int ReceiverCount => _receiverKeys.Count;

    public bool IsSender(int id) => _senderKeys.ContainsKey(id);

    public bool IsReceiver(int id) => _receiverKeys.ContainsKey(id);

    public bool IsPreSq(int id) => Array.BinarySearch((int[])PreSqIds, id) >= 0;

    public bool VerifySender(int sender, ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature) => Verify(false, sender, data, signature);

    public bool VerifyReceiver(int receiver, ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature) => Verify(true, receiver, data, signature);

    /// <summary>The thread's parsed key for a sender (null when not enrolled or unparsable).</summary>
    public ECDsa? SenderKey(int sender) => Key(false, sender);

    public ECDsa? ReceiverKey(int receiver) => Key(true, receiver);

    private bool Verify(bool receiver, int id, ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature)
    {
        var key = Key(receiver, id);
        if (key is null || signature.Length != Envelope.EnvelopeLimits.SignatureBytes)
        {
            return false;
        }
        try
        {
            return key.VerifyData(data, signature, HashAlgorithmName.SHA256);
        }
        catch (CryptographicException)
        {
            return false;
        }
    }

    private ECDsa? Key(bool receiver, int id)
    {
        var cache = _parsed.Value!;
        if (cache.TryGetValue((receiver, id), out var k))
        {
            return k;
        }
        if (!(receiver ? _receiverKeys : _senderKeys).TryGetValue(id, out var spki))
        {
            return null;
        }
        var key = ECDsa.Create();
        try
        {
            key.ImportSubjectPublicKeyInfo(spki, out _);
        }
        catch (CryptographicException)
        {
            key.Dispose();
            return null;
        }
        cache[(receiver, id)] = key;
        return key;
    }

    public void Dispose()
    {
        foreach (var d in _parsed.Values)
        {
            foreach (var k in d.Values)
            {
                k.Dispose();
            }
        }
        _parsed.Dispose();
    }
}
