using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Bft.Hosting.Crypto;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>Per-direction AEAD keys and IVs of one authenticated connection.</summary>
public sealed record LinkSecrets(int PeerId, DirectionKeys Send, DirectionKeys Receive);

/// <summary>
/// Mutual authentication with pinned P-256 identity keys and per-connection keys (SIGMA-style), in which
/// the initiator proves who it is before the responder spends anything but a random challenge on it:
/// <code>
/// I -> R  HELLO      initiator id, expected responder id, ephemeral ECDH point E_I, nonce N_I
/// R -> I  CHALLENGE  responder id, nonce N_R
/// I -> R  PROOF      Sig_I("init" || T1),  T1 = H(protocol || HELLO || CHALLENGE)
/// R -> I  RESPONSE   ephemeral ECDH point E_R, Sig_R("resp" || T2),  T2 = H(protocol || HELLO || CHALLENGE || PROOF || E_R)
/// </code>
/// A stranger claiming a pinned id costs the responder one signature verification: no key generation, no
/// key agreement and no signature of its own, which an unauthenticated flood could otherwise buy for the
/// price of a 106-byte HELLO. The proof covers N_R, so a recorded one is worthless on another connection;
/// the response covers the initiator's HELLO (its id and N_I), so it cannot be replayed to another
/// initiator. Both directions' AES-256-GCM keys and nonce IVs come from HKDF-SHA256 over the ephemeral ECDH
/// secret salted with T2, so frames of one connection can never be replayed into another, and a stolen
/// identity key neither exposes nor lets anyone read old traffic (forward secrecy). Chosen over mutual TLS
/// because pinning raw keys in .NET's TLS stack needs certificates and custom validation, and the frames
/// already carry the sequence an AEAD nonce needs.
/// The HELLO's kind byte is the protocol version: v2 (HMAC frames, cleartext) sent 1, v3 (AEAD frames) sends
/// <see cref="HelloKind"/>, so a mixed pair fails in the handshake with a message naming the version, not in
/// the first frame. The transcript hashes the protocol name too, so a downgrade cannot pass the signatures.
/// </summary>
public static class LinkHandshake
{
    private const byte LegacyV2HelloKind = 1, HelloKind = 5, ChallengeKind = 2, ProofKind = 3, ResponseKind = 4;
    private const int PointBytes = 65, NonceBytes = 32, SignatureBytes = 64;
    private const int HelloBytes = 1 + 4 + 4 + PointBytes + NonceBytes;
    private const int ChallengeBytes = 1 + 4 + NonceBytes;
    private const int ProofBytes = 1 + SignatureBytes;
    private const int ResponseBytes = 1 + PointBytes + SignatureBytes;
    private const int KeyMaterialBytes = 2 * (DirectionKeys.KeyBytes + DirectionKeys.IvBytes);
    private static ReadOnlySpan<byte> Protocol => "SQLINK/v3"u8;
    private static ReadOnlySpan<byte> ResponderLabel => "SQLINK/v3/responder"u8;
    private static ReadOnlySpan<byte> InitiatorLabel => "SQLINK/v3/initiator"u8;
    private static ReadOnlySpan<byte> KeyInfo => "SQLINK/v3/aes-256-gcm-link-keys"u8;

    public static async Task<LinkSecrets> InitiateAsync(Stream stream, int self, int expectedPeer, IdentityKey identity, KeyRing ring, CancellationToken ct)
    {
        using var eph = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        var hello = new byte[HelloBytes];
        hello[0] = HelloKind;
        BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(1), self);
        BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(5), expectedPeer);
        ExportPoint(eph, hello.AsSpan(9, PointBytes));
        RandomNumberGenerator.Fill(hello.AsSpan(9 + PointBytes, NonceBytes));
        await stream.WriteAsync(hello, ct).ConfigureAwait(false);
        await stream.FlushAsync(ct).ConfigureAwait(false);

        var challenge = new byte[ChallengeBytes];
        await stream.ReadExactlyAsync(challenge, ct).ConfigureAwait(false);
        if (challenge[0] != ChallengeKind || BinaryPrimitives.ReadInt32LittleEndian(challenge.AsSpan(1)) != expectedPeer)
        {
            throw new LinkAuthenticationException($"peer did not answer as node {expectedPeer}");
        }
        var proof = new byte[ProofBytes];
        proof[0] = ProofKind;
        SignInto(identity, Labelled(InitiatorLabel, Transcript(hello, challenge)), proof.AsSpan(1));
        await stream.WriteAsync(proof, ct).ConfigureAwait(false);
        await stream.FlushAsync(ct).ConfigureAwait(false);

        var response = new byte[ResponseBytes];
        await stream.ReadExactlyAsync(response, ct).ConfigureAwait(false);
        var peerPoint = response.AsSpan(1, PointBytes);
        var transcript = Transcript(hello, challenge, proof, peerPoint);
        if (response[0] != ResponseKind || !ring.Verify(expectedPeer, Labelled(ResponderLabel, transcript), response.AsSpan(1 + PointBytes)))
        {
            throw new LinkAuthenticationException($"node {expectedPeer} failed to prove its pinned identity");
        }

        var (toResponder, toInitiator) = DeriveKeys(eph, peerPoint, transcript);
        return new LinkSecrets(expectedPeer, toResponder, toInitiator);
    }

    /// <summary>Answers a dialling node; <paramref name="acceptPeer"/> decides which ids may connect here.</summary>
    public static async Task<LinkSecrets> RespondAsync(Stream stream, int self, IdentityKey identity, KeyRing ring, Func<int, bool> acceptPeer, CancellationToken ct)
    {
        var hello = new byte[HelloBytes];
        await stream.ReadExactlyAsync(hello, ct).ConfigureAwait(false);
        var peer = BinaryPrimitives.ReadInt32LittleEndian(hello.AsSpan(1));
        if (hello[0] == LegacyV2HelloKind)
        {
            throw new LinkAuthenticationException($"node {peer} speaks SQLINK/v2 (cleartext frames); this node requires SQLINK/v3 (encrypted frames): upgrade it");
        }
        if (hello[0] != HelloKind || BinaryPrimitives.ReadInt32LittleEndian(hello.AsSpan(5)) != self)
        {
            throw new LinkAuthenticationException("hello not addressed to this node");
        }
        if (peer == self || !ring.Knows(peer) || !acceptPeer(peer))
        {
            throw new LinkAuthenticationException($"node {peer} is not allowed to connect here");
        }
        var challenge = new byte[ChallengeBytes];
        challenge[0] = ChallengeKind;
        BinaryPrimitives.WriteInt32LittleEndian(challenge.AsSpan(1), self);
        RandomNumberGenerator.Fill(challenge.AsSpan(5, NonceBytes));
        await stream.WriteAsync(challenge, ct).ConfigureAwait(false);
        await stream.FlushAsync(ct).ConfigureAwait(false);

        var proof = new byte[ProofBytes];
        await stream.ReadExactlyAsync(proof, ct).ConfigureAwait(false);
        if (proof[0] != ProofKind || !ring.Verify(peer, Labelled(InitiatorLabel, Transcript(hello, challenge)), proof.AsSpan(1)))
        {
            throw new LinkAuthenticationException($"node {peer} failed to prove its pinned identity");
        }

        // Only now, with the initiator proven, does this side generate, agree and sign.
        using var eph = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        var response = new byte[ResponseBytes];
        response[0] = ResponseKind;
        ExportPoint(eph, response.AsSpan(1, PointBytes));
        var transcript = Transcript(hello, challenge, proof, response.AsSpan(1, PointBytes));
        SignInto(identity, Labelled(ResponderLabel, transcript), response.AsSpan(1 + PointBytes));
        var (toResponder, toInitiator) = DeriveKeys(eph, hello.AsSpan(9, PointBytes), transcript);
        await stream.WriteAsync(response, ct).ConfigureAwait(false);
        await stream.FlushAsync(ct).ConfigureAwait(false);
        return new LinkSecrets(peer, toInitiator, toResponder);
    }

    private static byte[] Transcript(ReadOnlySpan<byte> hello, ReadOnlySpan<byte> challenge) => Transcript(hello, challenge, [], []);

    private static byte[] Transcript(ReadOnlySpan<byte> hello, ReadOnlySpan<byte> challenge, ReadOnlySpan<byte> proof, ReadOnlySpan<byte> responderPoint)
    {
        using var h = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        h.AppendData(Protocol);
        h.AppendData(hello);
        h.AppendData(challenge);
        h.AppendData(proof);
        h.AppendData(responderPoint);
        return h.GetHashAndReset();
    }

    private static byte[] Labelled(ReadOnlySpan<byte> label, ReadOnlySpan<byte> transcript) => [.. label, .. transcript];

    private static void SignInto(IdentityKey identity, byte[] data, Span<byte> destination)
    {
        if (!identity.Key.TrySignData(data, destination, HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation, out var written) || written != SignatureBytes)
        {
            throw new CryptographicException("identity signature has an unexpected size");
        }
    }

    private static void ExportPoint(ECDiffieHellman eph, Span<byte> destination)
    {
        var q = eph.ExportParameters(includePrivateParameters: false).Q;
        destination[0] = 0x04;
        q.X.AsSpan().CopyTo(destination[1..33]);
        q.Y.AsSpan().CopyTo(destination[33..65]);
    }

    /// <summary>
    /// HKDF-SHA256(secret, salt = T2) expanded to key(I->R) || key(R->I) || IV(I->R) || IV(R->I): each direction
    /// has its own key, so a frame can never be reflected back to its sender.
    /// </summary>
    private static (DirectionKeys ToResponder, DirectionKeys ToInitiator) DeriveKeys(ECDiffieHellman eph, ReadOnlySpan<byte> peerPoint, byte[] transcript)
    {
        if (peerPoint[0] != 0x04)
        {
            throw new LinkAuthenticationException("ephemeral key is not an uncompressed P-256 point");
        }
        byte[] secret;
        try
        {
            using var peer = ECDiffieHellman.Create(new ECParameters
            {
                Curve = ECCurve.NamedCurves.nistP256,
                Q = new ECPoint { X = peerPoint[1..33].ToArray(), Y = peerPoint[33..65].ToArray() },
            });
            secret = eph.DeriveRawSecretAgreement(peer.PublicKey);
        }
        catch (CryptographicException e)
        {
            throw new LinkAuthenticationException("invalid ephemeral key", e);
        }
        var okm = HKDF.DeriveKey(HashAlgorithmName.SHA256, secret, KeyMaterialBytes, transcript, KeyInfo.ToArray());
        CryptographicOperations.ZeroMemory(secret);
        const int K = DirectionKeys.KeyBytes, V = DirectionKeys.IvBytes;
        var keys = (new DirectionKeys(okm[..K], okm[(2 * K)..(2 * K + V)]), new DirectionKeys(okm[K..(2 * K)], okm[(2 * K + V)..]));
        CryptographicOperations.ZeroMemory(okm);
        return keys;
    }
}
