using System.Buffers;
using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Fuzz;

/// <summary>
/// The BFT link: <see cref="LinkHandshake"/> on either side, then the frames that follow it through
/// <see cref="FrameCodec"/> and <see cref="MessageCodec"/>, exactly as AuthenticatedLink reads them.
/// Input: a flags byte, then the peer's handshake message(s), then the bytes that follow on the link.
/// <list type="bullet">
/// <item>bit 0: 0 = the product responds (the input holds the peer's HELLO, then its PROOF unless the peer is honest),
/// 1 = the product dials (the input holds the CHALLENGE, then the RESPONSE).</item>
/// <item>bit 1: the peer holds its pinned key and signs honestly over whatever it sent (a Byzantine replica, not a stranger),
/// so fuzzed ids, points and nonces get past the signature to the key derivation.</item>
/// <item>bit 2: the frames are sealed (AES-256-GCM) with the link's real key and IV (an authenticated peer), the rest read as
/// <c>u16 length | body</c> chunks; otherwise the rest is the raw byte stream.</item>
/// </list>
/// Refusals: <see cref="LinkAuthenticationException"/>, <see cref="IOException"/> (the peer hung up),
/// <see cref="MalformedMessageException"/>; those are what LinkListener and the receive loop catch.
/// </summary>
internal sealed class HandshakeTarget : FuzzTarget
{
    private const int Self = 0, Peer = 1;
    private const int HelloBytes = 106, ChallengeBytes = 37, ProofBytes = 65, ResponseBytes = 130, PointBytes = 65, SignatureBytes = 64;
    private readonly IdentityKey _self = IdentityKey.Generate();
    private readonly IdentityKey _peer = IdentityKey.Generate();
    private readonly KeyRing _ring;

    public HandshakeTarget()
    {
        using var other2 = IdentityKey.Generate();
        using var other3 = IdentityKey.Generate();
        using var client = IdentityKey.Generate();
        IdentityKey[] keys = [_self, _peer, other2, other3];
        _ring = new KeyRing(new ClusterConfig
        {
            Protocol = new ReplicaConfig(),
            Replicas = [.. keys.Select((k, i) => new ReplicaEntry { Id = i, Endpoint = $"127.0.0.1:{7000 + i}", PublicKey = k.PublicKeyBase64 })],
            Clients = [new ClientEntry { Id = 10, PublicKey = client.PublicKeyBase64 }],
        });
    }

    public override string Name => "handshake";

    public override void Run(byte[] input)
    {
        var c = new Cursor(input);
        var flags = c.U8();
        Outcome = "accepted";
        LinkSecrets secrets;
        try
        {
            secrets = (flags & 1) == 0 ? Respond(c, honest: (flags & 2) != 0) : Initiate(c, honest: (flags & 2) != 0);
        }
        catch (Exception e) when (e is LinkAuthenticationException or IOException)
        {
            Refused(e);
            return;
        }
        if (secrets.PeerId != Peer || secrets.Send.Key.Length != 32 || secrets.Receive.Key.Length != 32 || secrets.Send.Iv.Length != 12 || secrets.Receive.Iv.Length != 12)
        {
            throw new ContractViolation($"handshake accepted peer {secrets.PeerId} with keys of {secrets.Send.Key.Length}/{secrets.Receive.Key.Length} bytes");
        }
        if (secrets.Send.Key.AsSpan().SequenceEqual(secrets.Receive.Key))
        {
            throw new ContractViolation("both directions of a link got the same key");
        }
        var stream = (flags & 4) != 0 ? Sealed(c, secrets.Receive) : c.Rest();
        try
        {
            ReadFrames(stream, secrets.Receive);
        }
        catch (MalformedMessageException e)
        {
            Refused(e);
        }
    }

    private LinkSecrets Respond(Cursor c, bool honest)
    {
        var hello = c.Take(HelloBytes);
        var stream = new ScriptedStream();
        stream.Enqueue(hello);
        var writes = 0;
        stream.OnWrite = written =>
        {
            if (writes++ > 0)
            {
                if (written.Length != ResponseBytes)
                {
                    throw new ContractViolation($"RESPONSE of {written.Length} bytes");
                }
                return;
            }
            if (written.Length != ChallengeBytes)
            {
                throw new ContractViolation($"CHALLENGE of {written.Length} bytes");
            }
            stream.Enqueue(honest
                ? [3, .. Sign(_peer, "SQLINK/v3/initiator"u8, Transcript(hello, written, [], []))]
                : c.Take(ProofBytes));
        };
        return LinkHandshake.RespondAsync(stream, Self, _self, _ring, id => id != 3, CancellationToken.None).GetAwaiter().GetResult();
    }

    private LinkSecrets Initiate(Cursor c, bool honest)
    {
        var stream = new ScriptedStream();
        byte[]? hello = null, challenge = null;
        stream.OnWrite = written =>
        {
            if (hello is null)
            {
                hello = written;
                challenge = c.Take(ChallengeBytes);
                stream.Enqueue(challenge);
                return;
            }
            var response = c.Take(ResponseBytes);
            if (honest && response.Length == ResponseBytes)
            {
                Sign(_peer, "SQLINK/v3/responder"u8, Transcript(hello, challenge, written, response.AsSpan(1, PointBytes)))
                    .CopyTo(response.AsSpan(1 + PointBytes));
            }
            stream.Enqueue(response);
        };
        return LinkHandshake.InitiateAsync(stream, Self, Peer, _self, _ring, CancellationToken.None).GetAwaiter().GetResult();
    }

    /// <summary>The rest of the input as <c>u16 length | body</c> chunks, each sealed as the next frame.</summary>
    private static byte[] Sealed(Cursor c, DirectionKeys keys)
    {
        using var cipher = new FrameCipher(keys);
        var output = new List<byte>();
        ulong sequence = 0;
        while (c.Remaining > 0)
        {
            var body = c.Take(c.U16());
            var frame = new byte[FrameCodec.Overhead + Math.Max(body.Length, FrameCodec.RecordHeaderBytes)];
            body.CopyTo(FrameCodec.BodyOf(frame));
            FrameCodec.SealInPlace(frame, sequence++, cipher);
            output.AddRange(frame);
        }
        return [.. output];
    }

    /// <summary>AuthenticatedLink's receive loop without the socket: a frame that fails to decrypt ends the link.</summary>
    private void ReadFrames(byte[] bytes, DirectionKeys keys)
    {
        using var cipher = new FrameCipher(keys);
        var buffer = new ReadOnlySequence<byte>(bytes);
        ulong sequence = 0;
        while (FrameCodec.TryReadFrame(ref buffer, out var frame))
        {
            var span = frame.ToArray();
            var body = new byte[FrameCodec.BodyLength(span.Length)];
            if (!FrameCodec.TryOpen(span, sequence, cipher, body))
            {
                Refused($"frame {sequence} failed authentication");
                return;
            }
            sequence++;
            ReadOnlySpan<byte> records = body;
            while (FrameCodec.TryNextRecord(ref records, out var record))
            {
                var message = MessageCodec.Decode(record);
                // What decodes must encode to a form that decodes again: the canonical form is stable.
                _ = MessageCodec.Decode(MessageCodec.Encode(message));
            }
        }
    }

    // The transcript and labels as LinkHandshake defines them, so the harness can sign as a key-holding peer.
    private static byte[] Transcript(ReadOnlySpan<byte> hello, ReadOnlySpan<byte> challenge, ReadOnlySpan<byte> proof, ReadOnlySpan<byte> responderPoint)
    {
        using var h = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        h.AppendData("SQLINK/v3"u8);
        h.AppendData(hello);
        h.AppendData(challenge);
        h.AppendData(proof);
        h.AppendData(responderPoint);
        return h.GetHashAndReset();
    }

    private static byte[] Sign(IdentityKey key, ReadOnlySpan<byte> label, byte[] transcript) =>
        key.Key.SignData([.. label, .. transcript], HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation);

    public override IEnumerable<byte[]> Seeds()
    {
        // A real HELLO from a real initiator, captured off the scripted stream.
        byte[]? hello = null;
        var capture = new ScriptedStream { OnWrite = w => hello ??= w };
        try
        {
            LinkHandshake.InitiateAsync(capture, Peer, Self, _peer, _ring, CancellationToken.None).GetAwaiter().GetResult();
        }
        catch (IOException)
        {
            // No CHALLENGE queued: the capture ends here by design.
        }
        var message = MessageCodec.Encode(new Heartbeat(1, 0, 5));
        var record = new byte[FrameCodec.RecordHeaderBytes + message.Length];
        FrameCodec.WriteRecord(record, message);
        byte[] chunk = [.. BitConverter.GetBytes((ushort)record.Length), .. record];
        var challenge = new byte[ChallengeBytes];
        challenge[0] = 2;
        BinaryPrimitives.WriteInt32LittleEndian(challenge.AsSpan(1), Peer);
        var response = new byte[ResponseBytes];
        response[0] = 4;
        hello!.AsSpan(9, PointBytes).CopyTo(response.AsSpan(1));
        yield return [0, .. hello!, 3, .. new byte[SignatureBytes]];
        yield return [2 | 4, .. hello!, .. chunk, .. chunk];
        yield return [1 | 2 | 4, .. challenge, .. response, .. chunk];
        yield return [1, .. challenge, .. response];
        yield return [2, .. hello!, 0x40, 0, 0, 0, .. new byte[60]];
        // A SQLINK/v2 HELLO (kind 1): refused by version before anything else.
        yield return [2, 1, .. hello!.AsSpan(1).ToArray()];
        // One sealed frame per message type, so every decoder of MessageCodec starts with a valid input.
        foreach (var sample in SieveQ.Bft.Hosting.Fuzz.SampleMessages.All(new Random(7)))
        {
            var encoded = MessageCodec.Encode(sample);
            var one = new byte[FrameCodec.RecordHeaderBytes + encoded.Length];
            FrameCodec.WriteRecord(one, encoded);
            yield return [2 | 4, .. hello!, .. BitConverter.GetBytes((ushort)one.Length), .. one];
        }
    }
}
