using System.Collections.Concurrent;
using System.Security.Cryptography;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;

namespace SieveQ.Deployment;

public enum PartyRole
{
    Sender,
    Receiver,
    PreSq,
    Replica,
}

/// <summary>
/// One party's private keys (from the deployment's key store) and the MAC rings it shares with every
/// peer, derived on first use by ECDH + HKDF from the enrolled public keys and cached. Thread-safe.
/// </summary>
public sealed class PartyKeys : IDisposable
{
    private readonly ConcurrentDictionary<(MacChannel, int), MacKeyRing?> _rings = new();
    private readonly Enrolment _enrolment;
    private readonly uint _epoch;

    private PartyKeys(PartyRole role, int id, Enrolment enrolment, uint epoch, ECDiffieHellman agreement, ECDsa? signing)
    {
        Role = role;
        Id = id;
        _enrolment = enrolment;
        _epoch = epoch;
        Agreement = agreement;
        Signing = signing;
    }

    public PartyRole Role { get; }
    public int Id { get; }
    public ECDiffieHellman Agreement { get; }
    /// <summary>Senders and receivers sign; pre-SQs and replicas only agree MAC keys.</summary>
    public ECDsa? Signing { get; }

    public static string SigningKeyName(PartyRole role, int id) => PartyKeyNames.Signing(Prefix(role), id);

    public static string AgreementKeyName(PartyRole role, int id) => PartyKeyNames.Agreement(Prefix(role), id);

    public static PartyKeys Open(DeploymentConfig deployment, Enrolment enrolment, PartyRole role, int id)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        var store = new PemFileKeyStore(deployment.Resolve(deployment.KeyDirectory));
        var agreeName = AgreementKeyName(role, id);
        if (!store.Exists(agreeName))
        {
            throw new DeploymentException($"no key-agreement key '{agreeName}' in {deployment.Resolve(deployment.KeyDirectory)}");
        }
        var agreement = store.GetOrCreateAgreementKey(agreeName);
        var signing = role is PartyRole.Sender or PartyRole.Receiver ? store.OpenSigningKey(SigningKeyName(role, id)) : null;
        return new PartyKeys(role, id, enrolment, deployment.MacEpoch, agreement, signing);
    }

    /// <summary>
    /// Where a replica or pre-SQ finds the senders enrolled now (the static enrolment with the changes ordered since);
    /// unset, the static enrolment. A sender it does not name has no ring, whatever was derived for it before, so a
    /// revoked sender's ring is never used again (and likewise a revoked receiver's, with <see cref="CurrentReceiver"/>).
    /// </summary>
    public Func<int, EnrolledSender?>? CurrentSender { get; set; }

    /// <summary>Where a replica finds the receivers enrolled now, as <see cref="CurrentSender"/> for senders.</summary>
    public Func<int, EnrolledReceiver?>? CurrentReceiver { get; set; }

    /// <summary>The ring this party shares with <paramref name="peer"/> on <paramref name="channel"/>; null when the peer is not enrolled.</summary>
    public MacKeyRing? Ring(MacChannel channel, int peer)
    {
        if (NotEnrolledNow(channel, peer))
        {
            return null;
        }
        if (_rings.TryGetValue((channel, peer), out var ring) && ring is not null)
        {
            return ring;
        }
        // Not cached while absent: a party enrolled through the ordering gets its ring as soon as it is known. Ids are
        // never bound to a second key, so a cached ring stays right.
        ring = Derive(channel, peer);
        return ring is null ? null : _rings.GetOrAdd((channel, peer), ring);
    }

    /// <summary>A peer whose enrolment changes through the ordering (a sender, or a receiver of a replica) that the current enrolment does not name.</summary>
    private bool NotEnrolledNow(MacChannel channel, int peer) => (channel, Role) switch
    {
        (MacChannel.SenderPreSq, PartyRole.PreSq) or (MacChannel.ReplicaSender, PartyRole.Replica) => CurrentSender is { } senders && senders(peer) is null,
        (MacChannel.ReplicaReceiver, PartyRole.Replica) => CurrentReceiver is { } receivers && receivers(peer) is null,
        _ => false,
    };

    private byte[]? ReceiverAgreementKey(int receiver) =>
        CurrentReceiver is { } current ? current(receiver)?.AgreementPublicKey : _enrolment.Receivers.FirstOrDefault(r => r.Id == receiver)?.AgreementPublicKey;

    private byte[]? SenderAgreementKey(int sender) =>
        CurrentSender is { } current ? current(sender)?.AgreementPublicKey : _enrolment.Senders.FirstOrDefault(s => s.Id == sender)?.AgreementPublicKey;

    private MacKeyRing? Derive(MacChannel channel, int peer)
    {
        var (first, second, peerKey) = channel switch
        {
            MacChannel.SenderPreSq when Role == PartyRole.Sender => (Id, peer, _enrolment.PreSqs.FirstOrDefault(p => p.Id == peer)?.AgreementPublicKey),
            MacChannel.SenderPreSq when Role == PartyRole.PreSq => (peer, Id, SenderAgreementKey(peer)),
            MacChannel.ReplicaReceiver when Role == PartyRole.Replica => (Id, peer, ReceiverAgreementKey(peer)),
            MacChannel.ReplicaReceiver when Role == PartyRole.Receiver => (peer, Id, _enrolment.Replicas.FirstOrDefault(r => r.Id == peer)?.AgreementPublicKey),
            MacChannel.ReplicaSender when Role == PartyRole.Replica => (Id, peer, SenderAgreementKey(peer)),
            MacChannel.ReplicaSender when Role == PartyRole.Sender => (peer, Id, _enrolment.Replicas.FirstOrDefault(r => r.Id == peer)?.AgreementPublicKey),
            _ => throw new InvalidOperationException($"a {Role} has no {channel} keys"),
        };
        if (peerKey is null)
        {
            return null;
        }
        return MacKeyDerivation.Ring(channel, first, second, _epoch, Agreement, peerKey, _epoch > 1 ? _epoch - 1 : null);
    }

    private static string Prefix(PartyRole role) => role switch
    {
        PartyRole.Sender => PartyKeyNames.Sender,
        PartyRole.Receiver => PartyKeyNames.Receiver,
        PartyRole.PreSq => PartyKeyNames.PreSq,
        PartyRole.Replica => PartyKeyNames.Replica,
        _ => throw new ArgumentOutOfRangeException(nameof(role)),
    };

    public void Dispose()
    {
        Agreement.Dispose();
        Signing?.Dispose();
    }
}
