using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.PreSq;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// The published wire test vectors (<c>docs/test-vectors/sender-v1.json</c>, described in
/// docs/sieve-protocol.md "Test vectors") against the implementation: every value in the file is
/// compared with what the codecs, the key derivation and the verifiers produce from the file's inputs.
/// A change to the wire format fails here first, and a third-party implementation that reproduces
/// the file agrees with this one.
/// </summary>
public sealed class WireTestVectorTests : IDisposable
{
    private readonly JsonDocument _doc;

    public WireTestVectorTests()
    {
        _doc = JsonDocument.Parse(File.ReadAllText(VectorFile()));
    }

    public void Dispose() => _doc.Dispose();

    private JsonElement Root => _doc.RootElement;

    private JsonElement Keys => Root.GetProperty("keys");

    /// <summary>The repository root is the first folder above the test binaries that holds SieveQ.sln.</summary>
    private static string VectorFile()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "SieveQ.sln")))
            {
                return Path.Combine(dir.FullName, "docs", "test-vectors", "sender-v1.json");
            }
        }
        throw new FileNotFoundException($"no folder holding SieveQ.sln above {AppContext.BaseDirectory}");
    }

    private static byte[] Hex(JsonElement e, string name) => Convert.FromHexString(e.GetProperty(name).GetString()!);

    /// <summary>tag || bytes, built here rather than by the implementation's helper.</summary>
    private static byte[] Cat(byte[] tag, byte[] bytes) => [.. tag, .. bytes];

    private static int Int(JsonElement e, string name) => e.GetProperty(name).GetInt32();

    private static long Long(JsonElement e, string name) => e.GetProperty(name).GetInt64();

    private static ECParameters Private(JsonElement key) =>
        new() { Curve = ECCurve.NamedCurves.nistP256, D = Hex(key, "privateScalar") };

    private ECDsa SigningKey(string name) => ECDsa.Create(Private(Keys.GetProperty(name)));

    private ECDiffieHellman AgreementKey(string name) => ECDiffieHellman.Create(Private(Keys.GetProperty(name)));

    private byte[] Spki(string name) => Hex(Keys.GetProperty(name), "publicKeySpki");

    private Enrolment VectorEnrolment() => Enrolment.FromJson(Root.GetProperty("enrolment").GetRawText());

    private MacKeyRing Ring(string macKey, uint epoch) => new(epoch, Hex(Root.GetProperty("macKeys").GetProperty(macKey), "key"));

    [Fact]
    public void WireTestVector_private_scalars_give_the_published_public_keys()
    {
        foreach (var key in Keys.EnumerateObject())
        {
            var v = key.Value;
            byte[] spki;
            ECParameters pub;
            if (key.Name == "senderSigning")
            {
                using var k = ECDsa.Create(Private(v));
                spki = k.ExportSubjectPublicKeyInfo();
                pub = k.ExportParameters(false);
            }
            else
            {
                using var k = ECDiffieHellman.Create(Private(v));
                spki = k.ExportSubjectPublicKeyInfo();
                pub = k.ExportParameters(false);
            }
            Assert.Equal(Hex(v, "publicKeySpki"), spki);
            Assert.Equal(91, spki.Length);
            Assert.Equal(Hex(v, "publicX"), pub.Q.X);
            Assert.Equal(Hex(v, "publicY"), pub.Q.Y);
            // SPKI = fixed 26-byte DER prefix (id-ecPublicKey, prime256v1, BIT STRING header) || 0x04 || X || Y.
            Assert.Equal([0x04, .. pub.Q.X!, .. pub.Q.Y!], spki[^65..]);
            Assert.Equal(Convert.ToBase64String(spki), v.GetProperty("publicKeySpkiBase64").GetString());
        }
    }

    [Fact]
    public void WireTestVector_enrolment_carries_the_keys_as_base64_spki()
    {
        var e = VectorEnrolment();
        var sender = Assert.Single(e.Senders);
        Assert.Equal(7, sender.Id);
        Assert.Equal(Spki("senderSigning"), sender.SignaturePublicKey);
        Assert.Equal(Spki("senderAgreement"), sender.AgreementPublicKey);
        Assert.Equal(Spki("preSqAgreement"), Assert.Single(e.PreSqs).AgreementPublicKey);
        Assert.Equal(Spki("replicaAgreement"), Assert.Single(e.Replicas).AgreementPublicKey);
    }

    [Fact]
    public void WireTestVector_mac_keys_derive_from_the_vector_inputs_on_both_sides()
    {
        foreach (var entry in Root.GetProperty("macKeys").EnumerateObject())
        {
            var v = entry.Value;
            var tag = v.GetProperty("channelTag").GetString()!;
            var channel = tag switch
            {
                _ when tag == Encoding.ASCII.GetString(DomainTags.MacKeySenderPreSq) => MacChannel.SenderPreSq,
                _ when tag == Encoding.ASCII.GetString(DomainTags.MacKeyReplicaSender) => MacChannel.ReplicaSender,
                _ => throw new InvalidOperationException($"{entry.Name}: unknown channel tag {tag}"),
            };
            var first = Int(v, "firstId");
            var second = Int(v, "secondId");
            var epoch = v.GetProperty("epoch").GetUInt32();
            var parties = v.GetProperty("parties").EnumerateArray().Select(p => p.GetString()!).ToArray();
            var expected = Hex(v, "key");

            using var firstKey = AgreementKey(parties[0]);
            using var secondKey = AgreementKey(parties[1]);
            Assert.Equal(expected, MacKeyDerivation.Derive(channel, first, second, epoch, firstKey, Spki(parties[1])));
            Assert.Equal(expected, MacKeyDerivation.Derive(channel, first, second, epoch, secondKey, Spki(parties[0])));

            // The documented intermediate values: raw ECDH x-coordinate, HKDF-SHA256 with an empty salt.
            var shared = firstKey.DeriveRawSecretAgreement(secondKey.PublicKey);
            Assert.Equal(Hex(v, "ecdhSharedSecret"), shared);
            var info = new byte[tag.Length + 12];
            Encoding.ASCII.GetBytes(tag, info);
            BinaryPrimitives.WriteUInt32LittleEndian(info.AsSpan(tag.Length), (uint)first);
            BinaryPrimitives.WriteUInt32LittleEndian(info.AsSpan(tag.Length + 4), (uint)second);
            BinaryPrimitives.WriteUInt32LittleEndian(info.AsSpan(tag.Length + 8), epoch);
            Assert.Equal(Hex(v, "hkdfInfo"), info);
            Assert.Equal(expected, HKDF.DeriveKey(HashAlgorithmName.SHA256, shared, Int(v, "length"), salt: [], info: info));
        }
    }

    [Fact]
    public void WireTestVector_message_encodes_from_its_fields()
    {
        var m = Root.GetProperty("message");
        var region = SenderMessageCodec.EncodeSignedRegion(Int(m, "sender"), Long(m, "seq"), Int(m, "receiver"), Hex(m, "data"));
        Assert.Equal(Hex(m, "signedRegion"), region);
        Assert.Equal(Hex(m, "signingInput"), SenderMessageCodec.SigningInput(region));
        Assert.Equal(Hex(m, "signingInputSha256"), SHA256.HashData(SenderMessageCodec.SigningInput(region)));
        Assert.Equal(Hex(m, "encoded"), SenderMessageCodec.Encode(region, SenderAuth.Single(Hex(m, "signature"))));
        Assert.Equal(m.GetProperty("dataText").GetString(), Encoding.ASCII.GetString(Hex(m, "data")));
    }

    [Fact]
    public void WireTestVector_message_signature_verifies_with_the_vector_public_key()
    {
        var m = Root.GetProperty("message");
        using var directory = new PublicKeyDirectory(VectorEnrolment());
        var check = new SenderSignatureCheck(directory);
        var encoded = Hex(m, "encoded");
        Assert.Equal(SignatureVerdict.Valid, check.Verify(SenderMessageCodec.Decode(encoded)));

        // IEEE P1363 over SHA-256 of tag || signed region, nothing else.
        using var pub = ECDsa.Create();
        pub.ImportSubjectPublicKeyInfo(Spki("senderSigning"), out _);
        Assert.True(pub.VerifyData(Hex(m, "signingInput"), Hex(m, "signature"), HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation));
        Assert.True(pub.VerifyHash(Hex(m, "signingInputSha256"), Hex(m, "signature"), DSASignatureFormat.IeeeP1363FixedFieldConcatenation));

        // Not vacuous: one changed DATA byte, or the signature under another tag, fails.
        var tampered = (byte[])encoded.Clone();
        tampered[SenderMessageCodec.HeaderBytes] ^= 1;
        Assert.Equal(SignatureVerdict.BadSignature, check.Verify(SenderMessageCodec.Decode(tampered)));
        Assert.False(pub.VerifyData(Hex(m, "signedRegion"), Hex(m, "signature"), HashAlgorithmName.SHA256));
    }

    [Fact]
    public void WireTestVector_frame_and_message_decode_to_their_fields()
    {
        var m = Root.GetProperty("message");
        var f = Root.GetProperty("frame");
        var frame = SenderFrameCodec.Decode(Hex(f, "encoded"));
        Assert.Equal(Int(f, "preSq"), frame.PreSq);
        Assert.Equal(f.GetProperty("keyEpoch").GetUInt32(), frame.KeyEpoch);
        Assert.Equal(StructureKind.SenderMessage, frame.BodyKind);
        Assert.Equal(Hex(m, "encoded"), frame.Body.ToArray());

        var message = SenderMessageCodec.Decode(frame.Body);
        Assert.Equal((Int(m, "sender"), Long(m, "seq"), Int(m, "receiver")), (message.Sender, message.Seq, message.Receiver));
        Assert.Equal(Hex(m, "data"), message.Data.ToArray());
        Assert.Equal(SenderAuthKind.Signature, message.Auth.Kind);
        Assert.Equal(Hex(m, "signature"), message.Auth.Signature.ToArray());
        Assert.Equal(Hex(m, "signedRegion"), message.SignedRegion.ToArray());
    }

    [Fact]
    public void WireTestVector_frame_mac_matches_and_a_pre_sq_accepts_the_frame()
    {
        var f = Root.GetProperty("frame");
        var epoch = f.GetProperty("keyEpoch").GetUInt32();
        var encoded = SenderFrameCodec.Encode(Int(f, "preSq"), Hex(Root.GetProperty("message"), "encoded"), Ring(f.GetProperty("macKey").GetString()!, epoch));
        Assert.Equal(Hex(f, "encoded"), encoded);
        Assert.Equal(Hex(f, "mac"), encoded[^32..]);
        Assert.Equal(Hex(f, "macInput"), Cat(DomainTags.SenderFrameMac, encoded[..^32]));
        Assert.Equal(Hex(f, "mac"), HMACSHA256.HashData(Hex(Root.GetProperty("macKeys").GetProperty("senderPreSq"), "key"), Hex(f, "macInput")));

        // The pre-SQ derives its side of the key from its own private key and the sender's enrolled key.
        var preSq = Int(f, "preSq");
        using var preSqKey = AgreementKey("preSqAgreement");
        var preSqRing = MacKeyDerivation.Ring(MacChannel.SenderPreSq, 7, preSq, epoch, preSqKey, Spki("senderAgreement"));
        Assert.True(SenderFrameCodec.VerifyMac(Hex(f, "encoded"), preSqRing));
        var filter = new PreSqFilter(preSq, new PreSqOptions(), new SenderWhitelist([7]), s => s == 7 ? preSqRing : null);
        var verdict = filter.Inspect(Hex(f, "encoded"), 0);
        Assert.True(verdict.Passed, $"{verdict.Stage} {verdict.Reason}");
        Assert.Equal(Hex(Root.GetProperty("message"), "encoded"), verdict.Body.ToArray());

        // Epochs: after a rotation to 2 the previous epoch (1) still verifies; a ring that only knows 2 refuses it.
        var rotated = MacKeyDerivation.Ring(MacChannel.SenderPreSq, 7, preSq, epoch + 1, preSqKey, Spki("senderAgreement"), previousEpoch: epoch);
        Assert.True(SenderFrameCodec.VerifyMac(Hex(f, "encoded"), rotated));
        Assert.Equal(Hex(Root.GetProperty("macKeys").GetProperty("senderPreSqEpoch2"), "key"),
            MacKeyDerivation.Derive(MacChannel.SenderPreSq, 7, preSq, epoch + 1, preSqKey, Spki("senderAgreement")));
        Assert.False(SenderFrameCodec.VerifyMac(Hex(f, "encoded"), Ring("senderPreSqEpoch2", epoch + 1)));
    }

    [Fact]
    public void WireTestVector_ackreq_encodes_verifies_and_decodes()
    {
        var a = Root.GetProperty("ackRequest");
        var decoded = AckRequestCodec.Decode(Hex(a, "encoded"));
        Assert.Equal((Int(a, "sender"), Long(a, "lastSentSeq"), Long(a, "lowestPending"), Long(a, "nonce")),
            (decoded.Sender, decoded.LastSentSeq, decoded.LowestPending, decoded.Nonce));
        Assert.Equal(Hex(a, "signedRegion"), decoded.SignedRegion.ToArray());
        Assert.Equal(Hex(a, "signature"), decoded.Signature.ToArray());
        Assert.Equal(Hex(a, "signingInput"), Cat(DomainTags.AckRequest, decoded.SignedRegion.ToArray()));

        using var pub = ECDsa.Create();
        pub.ImportSubjectPublicKeyInfo(Spki("senderSigning"), out _);
        Assert.True(AckRequestCodec.VerifySignature(decoded, pub));
        using var directory = new PublicKeyDirectory(VectorEnrolment());
        Assert.True(directory.VerifySender(7, Hex(a, "signingInput"), Hex(a, "signature")));

        // The implementation's own encoding of these fields: same signed bytes, a fresh (different) valid signature.
        using var signing = SigningKey("senderSigning");
        var own = AckRequestCodec.Encode(decoded.Sender, decoded.LastSentSeq, decoded.LowestPending, decoded.Nonce, signing);
        Assert.Equal(Hex(a, "signedRegion"), own[..AckRequestCodec.SignedBytes]);
        Assert.True(AckRequestCodec.VerifySignature(AckRequestCodec.Decode(own), pub));

        var f = a.GetProperty("frame");
        var frame = SenderFrameCodec.Encode(Int(f, "preSq"), Hex(a, "encoded"), Ring(f.GetProperty("macKey").GetString()!, f.GetProperty("keyEpoch").GetUInt32()));
        Assert.Equal(Hex(f, "encoded"), frame);
        Assert.Equal(Hex(f, "mac"), frame[^32..]);
        Assert.Equal(Hex(f, "macInput"), Cat(DomainTags.SenderFrameMac, frame[..^32]));
        Assert.Equal(StructureKind.AckRequest, SenderFrameCodec.Decode(frame).BodyKind);
    }

    [Fact]
    public void WireTestVector_ackres_mac_matches_and_the_sender_accepts_it()
    {
        var r = Root.GetProperty("ackResponse");
        var epoch = r.GetProperty("keyEpoch").GetUInt32();
        var encoded = AckResponseCodec.Encode(Int(r, "replica"), Int(r, "sender"), Int(r, "lossPpm"), Long(r, "deliveredUpTo"), Int(r, "assignedPreSq"), Long(r, "nonce"),
            Long(r, "verdictsFrom"), [], Ring(r.GetProperty("macKey").GetString()!, epoch));
        Assert.Equal(Hex(r, "encoded"), encoded);
        Assert.Equal(Hex(r, "mac"), encoded[^32..]);
        Assert.Equal(Hex(r, "macInput"), Cat(DomainTags.AckResponse, encoded[..^32]));

        var decoded = AckResponseCodec.Decode(Hex(r, "encoded"));
        Assert.Equal((Int(r, "replica"), Int(r, "sender"), Int(r, "lossPpm"), Long(r, "deliveredUpTo"), Int(r, "assignedPreSq"), Long(r, "nonce"), epoch),
            (decoded.Replica, decoded.Sender, decoded.LossPpm, decoded.DeliveredUpTo, decoded.AssignedPreSq, decoded.Nonce, decoded.KeyEpoch));
        Assert.Equal(Long(r, "verdictsFrom"), decoded.VerdictsFrom);
        Assert.Equal(r.GetProperty("rejections").GetArrayLength(), decoded.Rejections.Count);

        using var senderKey = AgreementKey("senderAgreement");
        var senderRing = MacKeyDerivation.Ring(MacChannel.ReplicaSender, Int(r, "replica"), Int(r, "sender"), epoch, senderKey, Spki("replicaAgreement"));
        Assert.True(AckResponseCodec.VerifyMac(Hex(r, "encoded"), senderRing));
    }

    /// <summary>
    /// The sender-SQ itself, run with the vector's keys: its first number is 1, its frame for the vector
    /// message equals the vector frame up to the signature, its ACKREQ carries the vector's numbers and
    /// nonce, and it takes the vector ACKRES as the acknowledgement of message 1.
    /// </summary>
    [Fact]
    public void WireTestVector_sender_sq_numbers_and_nonces_follow_the_vector()
    {
        var m = Root.GetProperty("message");
        var f = Root.GetProperty("frame");
        var preSq = Int(f, "preSq");
        using var signing = SigningKey("senderSigning");
        var sq = new SenderSq(Int(m, "sender"), signing, new SenderSequencer(new InMemorySequenceStore()), [preSq], preSq, 0,
            p => p == preSq ? Ring("senderPreSq", 1) : null, r => r == 0 ? Ring("replicaSender", 1) : null);

        Assert.True(sq.TryEnqueue(Int(m, "receiver"), Hex(m, "data"), out var seq));
        Assert.Equal(Long(m, "seq"), seq);
        var sent = Assert.Single(sq.Flush(0));
        Assert.Equal(preSq, sent.PreSq);
        // Frame header and body up to the signature: 1 + 4 + 4 (frame) + signed region + 1 (auth kind).
        var unsigned = 9 + Hex(m, "signedRegion").Length + 1;
        Assert.Equal(Hex(f, "encoded")[..unsigned], sent.Frame[..unsigned]);
        using var directory = new PublicKeyDirectory(VectorEnrolment());
        Assert.Equal(SignatureVerdict.Valid, new SenderSignatureCheck(directory).Verify(SenderMessageCodec.Decode(SenderFrameCodec.Decode(sent.Frame).Body)));

        var a = Root.GetProperty("ackRequest");
        var ack = Assert.Single(sq.Tick(0));
        var request = AckRequestCodec.Decode(SenderFrameCodec.Decode(ack.Frame).Body);
        Assert.Equal(Hex(a, "signedRegion"), request.SignedRegion.ToArray());

        var outcome = sq.OnAckResponse(Hex(Root.GetProperty("ackResponse"), "encoded"), 1);
        Assert.True(outcome.Accepted);
        Assert.Equal(Long(Root.GetProperty("ackResponse"), "deliveredUpTo"), sq.AcknowledgedUpTo);
        // Message 1 acknowledged, with its verdict: approved (from verdictsFrom 1 on, no rejection listed).
        var newly = Assert.IsType<AcknowledgedVerdicts>(outcome.Newly);
        Assert.Equal((1L, 1L, 1L), (newly.From, newly.UpTo, newly.VerdictsFrom));
        Assert.Empty(newly.Rejections);
    }

    [Fact]
    public void WireTestVector_batch_leaves_root_paths_and_root_signature()
    {
        var b = Root.GetProperty("batch");
        var sender = Int(b, "sender");
        var messages = b.GetProperty("messages").EnumerateArray().ToArray();
        var regions = messages.Select(x => SenderMessageCodec.EncodeSignedRegion(sender, Long(x, "seq"), Int(x, "receiver"), Hex(x, "data"))).ToArray();
        var leaves = regions.Select(r => MerkleBatch.Leaf(r)).ToArray();
        var tree = MerkleBatch.Build(leaves);
        Assert.Equal(Int(b, "leafCount"), tree.LeafCount);
        Assert.Equal(Hex(b, "root"), tree.Root.ToArray());
        Assert.Equal(Hex(b.GetProperty("innerNodes"), "node01"), MerkleBatch.Node(leaves[0], leaves[1]).ToArray());
        var rootInput = SenderMessageCodec.RootSigningInput(sender, tree.LeafCount, tree.Root);
        Assert.Equal(Hex(b, "rootSigningInput"), rootInput);

        using var directory = new PublicKeyDirectory(VectorEnrolment());
        var check = new SenderSignatureCheck(directory);
        Assert.True(directory.VerifySender(sender, rootInput, Hex(b, "rootSignature")));
        for (var i = 0; i < messages.Length; i++)
        {
            var x = messages[i];
            Assert.Equal(Hex(x, "signedRegion"), regions[i]);
            Assert.Equal(Hex(x, "leaf"), leaves[i].ToArray());
            Assert.Equal(i, Int(x, "leafIndex"));
            Assert.Equal(Hex(x, "path"), tree.Path(i));
            var encoded = SenderMessageCodec.Encode(regions[i], SenderAuth.InBatch(Hex(b, "rootSignature"), i, tree.LeafCount, tree.Path(i)));
            Assert.Equal(Hex(x, "encoded"), encoded);
            var decoded = SenderMessageCodec.Decode(Hex(x, "encoded"));
            Assert.Equal((SenderAuthKind.Batch, i, tree.LeafCount), (decoded.Auth.Kind, decoded.Auth.LeafIndex, decoded.Auth.LeafCount));
            Assert.Equal(SignatureVerdict.Valid, check.Verify(decoded));
        }
    }
}
