using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Bft.Hosting.Crypto;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>Per-direction MAC keys of one authenticated connection.</summary>
public sealed record LinkSecrets(int PeerId, byte[] SendKey, byte[] ReceiveKey);

/// <summary>
/// Mutual authentication with pinned P-256 identity keys and per-connection keys (SIGMA-style):
/// <code>
/// I -> R  HELLO    initiator id, expected responder id, ephemeral ECDH point, nonce
/// R -> I  RESPONSE responder id, ephemeral ECDH point, nonce, Sig_R("resp" || H(transcript))
/// I -> R  FINISH   Sig_I("init" || H(transcript))
/// </code>
/// Both MAC keys come from HKDF-SHA256 over the ephemeral ECDH secret salted with the transcript hash, so
/// frames of one connection can never be replayed into another and a stolen key does not expose old traffic.
/// Chosen over mutual TLS because pinning raw keys in .NET's TLS stack needs certificates and custom
/// validation, and TLS record encryption costs more than a MAC while the payloads need no secrecy here.
/// </summary>
public static class LinkHandshake
{
    private const byte HelloKind = 1, ResponseKind = 2, FinishKind = 3;
    private const int PointBytes = 65, NonceBytes = 32, SignatureBytes = 64;
    private const int HelloBytes = 1 + 4 + 4 + PointBytes + NonceBytes;
    private const int ResponseBytes = 1 + 4 + PointBytes + NonceBytes + SignatureBytes;
    private const int FinishBytes = 1 + SignatureBytes;
    private static ReadOnlySpan<byte> Protocol => "SQLINK/v1"u8;
    private static ReadOnlySpan<byte> ResponderLabel => "SQLINK/v1/responder"u8;
    private static ReadOnlySpan<byte> InitiatorLabel => "SQLINK/v1/initiator"u8;
    private static ReadOnlySpan<byte> KeyInfo => "SQLINK/v1/link-keys"u8;

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

        var resp = new byte[ResponseBytes];
        await stream.ReadExactlyAsync(resp, ct).ConfigureAwait(false);
        if (resp[0] != ResponseKind || BinaryPrimitives.ReadInt32LittleEndian(resp.AsSpan(1)) != expectedPeer)
        {
            throw new LinkAuthenticationException($"peer did not answer as node {expectedPeer}");
        }
        var transcript = TranscriptHash(hello, resp.AsSpan(0, ResponseBytes - SignatureBytes));
        if (!ring.Verify(expectedPeer, Labelled(ResponderLabel, transcript), resp.AsSpan(ResponseBytes - SignatureBytes)))
        {
            throw new LinkAuthenticationException($"node {expectedPeer} failed to prove its pinned identity");
        }
        var finish = new byte[FinishBytes];
        finish[0] = FinishKind;
        SignInto(identity, Labelled(InitiatorLabel, transcript), finish.AsSpan(1));
        await stream.WriteAsync(finish, ct).ConfigureAwait(false);
        await stream.FlushAsync(ct).ConfigureAwait(false);

        var (toResponder, toInitiator) = DeriveKeys(eph, resp.AsSpan(5, PointBytes), transcript);
        return new LinkSecrets(expectedPeer, toResponder, toInitiator);
    }

    /// <summary>Answers a dialling node; <paramref name="acceptPeer"/> decides which ids may connect here.</summary>
    public static async Task<LinkSecrets> RespondAsync(Stream stream, int self, IdentityKey identity, KeyRing ring, Func<int, bool> acceptPeer, CancellationToken ct)
    {
        var hello = new byte[HelloBytes];
        await stream.ReadExactlyAsync(hello, ct).ConfigureAwait(false);
        var peer = BinaryPrimitives.ReadInt32LittleEndian(hello.AsSpan(1));
        if (hello[0] != HelloKind || BinaryPrimitives.ReadInt32LittleEndian(hello.AsSpan(5)) != self)
        {
            throw new LinkAuthenticationException("hello not addressed to this node");
        }
        if (peer == self || !ring.Knows(peer) || !acceptPeer(peer))
        {
            throw new LinkAuthenticationException($"node {peer} is not allowed to connect here");
        }
        using var eph = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        var resp = new byte[ResponseBytes];
        resp[0] = ResponseKind;
        BinaryPrimitives.WriteInt32LittleEndian(resp.AsSpan(1), self);
        ExportPoint(eph, resp.AsSpan(5, PointBytes));
        RandomNumberGenerator.Fill(resp.AsSpan(5 + PointBytes, NonceBytes));
        var transcript = TranscriptHash(hello, resp.AsSpan(0, ResponseBytes - SignatureBytes));
        SignInto(identity, Labelled(ResponderLabel, transcript), resp.AsSpan(ResponseBytes - SignatureBytes));
        await stream.WriteAsync(resp, ct).ConfigureAwait(false);
        await stream.FlushAsync(ct).ConfigureAwait(false);

        var finish = new byte[FinishBytes];
        await stream.ReadExactlyAsync(finish, ct).ConfigureAwait(false);
        if (finish[0] != FinishKind || !ring.Verify(peer, Labelled(InitiatorLabel, transcript), finish.AsSpan(1)))
        {
            throw new LinkAuthenticationException($"node {peer} failed to prove its pinned identity");
        }
        var (toResponder, toInitiator) = DeriveKeys(eph, hello.AsSpan(9, PointBytes), transcript);
        return new LinkSecrets(peer, toInitiator, toResponder);
    }

    private static byte[] TranscriptHash(ReadOnlySpan<byte> hello, ReadOnlySpan<byte> responseBody)
    {
        using var h = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        h.AppendData(Protocol);
        h.AppendData(hello);
        h.AppendData(responseBody);
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

    private static (byte[] ToResponder, byte[] ToInitiator) DeriveKeys(ECDiffieHellman eph, ReadOnlySpan<byte> peerPoint, byte[] transcript)
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
        var okm = HKDF.DeriveKey(HashAlgorithmName.SHA256, secret, 64, transcript, KeyInfo.ToArray());
        CryptographicOperations.ZeroMemory(secret);
        return (okm[..32], okm[32..]);
    }
}
