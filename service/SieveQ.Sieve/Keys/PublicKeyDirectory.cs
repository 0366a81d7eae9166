using System.Security.Cryptography;

namespace SieveQ.Sieve.Keys;

/// <summary>
/// Verification side of an <see cref="Enrolment"/>: checks ECDSA signatures of senders and receivers.
/// Parsed public keys are cached per thread because .NET does not promise that one key object may
/// verify on several threads at once, and the replica host verifies on a worker pool.
/// <para>
/// Senders and receivers enrolled or revoked through the ordering are laid over the static enrolment with
/// <see cref="SetEnrolmentChanges"/> (an immutable swap, so readers on any thread see one whole table). A revoked id
/// is never enrolled again, so a parsed key cached for an id stays that id's key; the lookup always asks the current
/// table first, so a revoked party's cached key is never used.
/// </para>
/// </summary>
public sealed class PublicKeyDirectory : IDisposable
{
    private readonly Dictionary<int, EnrolledSender> _staticSenders;
    private readonly Dictionary<int, EnrolledReceiver> _staticReceivers;
    private Dictionary<int, EnrolledSender> _senders;
    private Dictionary<int, EnrolledReceiver> _receivers;
    private HashSet<int> _revoked = [];
    private readonly ThreadLocal<Dictionary<(bool Receiver, int Id), ECDsa>> _parsed = new(() => [], trackAllValues: true);

    public PublicKeyDirectory(Enrolment enrolment)
    {
        ArgumentNullException.ThrowIfNull(enrolment);
        Enrolment = enrolment;
        _staticSenders = enrolment.Senders.ToDictionary(s => s.Id);
        _staticReceivers = enrolment.Receivers.ToDictionary(r => r.Id);
        _senders = _staticSenders;
        _receivers = _staticReceivers;
        PreSqIds = enrolment.PreSqs.Select(p => p.Id).Order().ToArray();
    }

    public Enrolment Enrolment { get; }

    /// <summary>Enrolled pre-SQ ids, ascending (the order replicas pick reassignment targets in).</summary>
    public IReadOnlyList<int> PreSqIds { get; }

    /// <summary>Senders of the static enrolment (what the state budget is sized for, with the enrolment-change allowance).</summary>
    public int SenderCount => _staticSenders.Count;

    /// <summary>Receivers of the static enrolment (what the state budget is sized for, with the enrolment-change allowance).</summary>
    public int ReceiverCount => _staticReceivers.Count;

    /// <summary>Senders enrolled now: the static enrolment less revocations, plus enrolments through the ordering.</summary>
    public int CurrentSenderCount => Volatile.Read(ref _senders).Count;

    /// <summary>The sender enrolled now under <paramref name="id"/> (static or through the ordering), or null.</summary>
    public EnrolledSender? Sender(int id) => Volatile.Read(ref _senders).GetValueOrDefault(id);

    /// <summary>The receiver enrolled now under <paramref name="id"/> (static or through the ordering), or null.</summary>
    public EnrolledReceiver? Receiver(int id) => Volatile.Read(ref _receivers).GetValueOrDefault(id);

    /// <summary>Whether the static enrolment names the id as a sender (revoked or not).</summary>
    public bool IsStaticSender(int id) => _staticSenders.ContainsKey(id);

    /// <summary>Whether the static enrolment names the id as a receiver (revoked or not).</summary>
    public bool IsStaticReceiver(int id) => _staticReceivers.ContainsKey(id);

    /// <summary>
    /// Replaces the changes laid over the static enrolment: an entry with a party enrols it in its role, a null entry
    /// revokes the id in every role it had. Whoever holds the agreed table calls this after every change and restore.
    /// </summary>
    public void SetEnrolmentChanges(IEnumerable<KeyValuePair<int, EnrolledParty?>> changes)
    {
        ArgumentNullException.ThrowIfNull(changes);
        var senders = new Dictionary<int, EnrolledSender>(_staticSenders);
        var receivers = new Dictionary<int, EnrolledReceiver>(_staticReceivers);
        var revoked = new HashSet<int>();
        foreach (var (id, e) in changes)
        {
            if (e is null)
            {
                senders.Remove(id);
                receivers.Remove(id);
                revoked.Add(id);
            }
            else if (e.Receiver)
            {
                receivers[id] = e.AsReceiver();
            }
            else
            {
                senders[id] = e.AsSender();
            }
        }
        // Revocations first: a reader that sees a revoked id gone from a role also finds it revoked.
        Volatile.Write(ref _revoked, revoked);
        Volatile.Write(ref _senders, senders);
        Volatile.Write(ref _receivers, receivers);
    }

    /// <summary>Whether, and with which keys, the sender is enrolled now (any thread).</summary>
    public PartyStanding SenderStanding(int id)
    {
        if (Sender(id) is { } s)
        {
            var throughOrdering = !_staticSenders.TryGetValue(id, out var original) || !ReferenceEquals(original, s);
            return new PartyStanding(PartyStandingState.Enrolled, s.Name, s.SignaturePublicKey, s.AgreementPublicKey, throughOrdering);
        }
        return Revoked(id);
    }

    /// <summary>Whether, and with which keys, the receiver is enrolled now (any thread).</summary>
    public PartyStanding ReceiverStanding(int id)
    {
        if (Receiver(id) is { } r)
        {
            var throughOrdering = !_staticReceivers.TryGetValue(id, out var original) || !ReferenceEquals(original, r);
            return new PartyStanding(PartyStandingState.Enrolled, r.Name, r.SignaturePublicKey, r.AgreementPublicKey, throughOrdering);
        }
        return Revoked(id);
    }

    private PartyStanding Revoked(int id) => Volatile.Read(ref _revoked).Contains(id)
        ? new PartyStanding(PartyStandingState.Revoked, "", [], [], ThroughOrdering: true)
        : PartyStanding.NotEnrolled;

    /// <summary>Ids of the senders enrolled now, ascending.</summary>
    public IReadOnlyList<int> CurrentSenderIds() => [.. Volatile.Read(ref _senders).Keys.Order()];

    /// <summary>Ids of the receivers enrolled now, ascending.</summary>
    public IReadOnlyList<int> CurrentReceiverIds() => [.. Volatile.Read(ref _receivers).Keys.Order()];

    public bool IsSender(int id) => Volatile.Read(ref _senders).ContainsKey(id);

    public bool IsReceiver(int id) => Volatile.Read(ref _receivers).ContainsKey(id);

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
        var spki = receiver ? Receiver(id)?.SignaturePublicKey : Sender(id)?.SignaturePublicKey;
        if (spki is null)
        {
            return null;
        }
        var cache = _parsed.Value!;
        if (cache.TryGetValue((receiver, id), out var k))
        {
            return k;
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
