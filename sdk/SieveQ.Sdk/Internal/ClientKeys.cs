using System.Collections.Concurrent;
using System.Security.Cryptography;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// A sender's or receiver's private keys, opened from the configured key store, and the MAC rings it
/// shares with the pre-SQs and replica-SQs, derived on first use by ECDH + HKDF from their enrolled
/// public keys and cached. Thread-safe. Opening checks what would otherwise fail in silence: the party
/// must be enrolled, with the signing key it holds (else every pre-SQ or replica drops its frames).
/// </summary>
internal sealed class ClientKeys : IDisposable
{
    private readonly ConcurrentDictionary<(MacChannel, int), MacKeyRing?> _rings = new();
    private readonly string _party;
    private readonly int _id;
    private readonly Enrolment _enrolment;
    private readonly uint _epoch;

    private ClientKeys(string party, int id, Enrolment enrolment, uint epoch, ECDiffieHellman agreement, ECDsa signing)
    {
        _party = party;
        _id = id;
        _enrolment = enrolment;
        _epoch = epoch;
        Agreement = agreement;
        Signing = signing;
    }

    public ECDiffieHellman Agreement { get; }

    public ECDsa Signing { get; }

    public static ClientKeys OpenSender(SieveQClientConfiguration config, int id) =>
        Open(config, PartyKeyNames.Sender, id, config.Enrolment.Senders.FirstOrDefault(s => s.Id == id)?.SignaturePublicKey);

    public static ClientKeys OpenReceiver(SieveQClientConfiguration config, int id) =>
        Open(config, PartyKeyNames.Receiver, id, config.Enrolment.Receivers.FirstOrDefault(r => r.Id == id)?.SignaturePublicKey);

    private static ClientKeys Open(SieveQClientConfiguration config, string party, int id, byte[]? enrolledSigningKey)
    {
        var agreeName = config.AgreementKeyName(party, id);
        if (!config.Keys.Exists(agreeName))
        {
            throw new SieveQConfigurationException($"no key-agreement key '{agreeName}' in the configured key store");
        }
        var agreement = config.Keys.GetOrCreateAgreementKey(agreeName);
        ECDsa? signing = null;
        try
        {
            signing = config.Keys.OpenSigningKey(config.SigningKeyName(party, id));
            if (enrolledSigningKey is null)
            {
                throw new SieveQConfigurationException($"{party} {id} is not enrolled in this deployment: every message of it would be dropped; enrol it first");
            }
            if (!CryptographicOperations.FixedTimeEquals(enrolledSigningKey, signing.ExportSubjectPublicKeyInfo()))
            {
                throw new SieveQConfigurationException($"the signing key found for {party} {id} is not the one its enrolment pins: every signature would be refused");
            }
            return new ClientKeys(party, id, config.Enrolment, config.MacEpoch, agreement, signing);
        }
        catch
        {
            signing?.Dispose();
            agreement.Dispose();
            throw;
        }
    }

    /// <summary>The ring this party shares with <paramref name="peer"/> on <paramref name="channel"/>; null when the peer is not enrolled.</summary>
    public MacKeyRing? Ring(MacChannel channel, int peer) => _rings.GetOrAdd((channel, peer), k => Derive(k.Item1, k.Item2));

    private MacKeyRing? Derive(MacChannel channel, int peer)
    {
        // The first id of a ring is its channel's first party: the sender on sender/pre-SQ, the replica otherwise.
        var (first, second, peerKey) = (channel, _party) switch
        {
            (MacChannel.SenderPreSq, PartyKeyNames.Sender) => (_id, peer, _enrolment.PreSqs.FirstOrDefault(p => p.Id == peer)?.AgreementPublicKey),
            (MacChannel.ReplicaSender, PartyKeyNames.Sender) => (peer, _id, _enrolment.Replicas.FirstOrDefault(r => r.Id == peer)?.AgreementPublicKey),
            (MacChannel.ReplicaReceiver, PartyKeyNames.Receiver) => (peer, _id, _enrolment.Replicas.FirstOrDefault(r => r.Id == peer)?.AgreementPublicKey),
            _ => throw new InvalidOperationException($"a {_party} has no {channel} keys"),
        };
        if (peerKey is null)
        {
            return null;
        }
        return MacKeyDerivation.Ring(channel, first, second, _epoch, Agreement, peerKey, _epoch > 1 ? _epoch - 1 : null);
    }

    public void Dispose()
    {
        Agreement.Dispose();
        Signing.Dispose();
    }
}
