using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Tests;

public sealed class EnvelopeTests : IClassFixture<TestWorld>
{
    private readonly TestWorld _w;

    public EnvelopeTests(TestWorld w) => _w = w;

    [Fact]
    public void SenderMessage_round_trips_and_verifies()
    {
        var bytes = _w.Message(1, 7, 100, "hello");
        var m = SenderMessageCodec.Decode(bytes);
        Assert.Equal((1, 7L, 100), (m.Sender, m.Seq, m.Receiver));
        Assert.Equal("hello"u8.ToArray(), m.Data.ToArray());
        Assert.Equal(SenderAuthKind.Signature, m.Auth.Kind);
        Assert.Equal(SignatureVerdict.Valid, new SenderSignatureCheck(_w.Keys).Verify(m));
        Assert.Equal(bytes, SenderMessageCodec.Encode(m.SignedRegion.Span, m.Auth));
    }

    [Fact]
    public void Tampered_data_fails_the_signature()
    {
        var bytes = _w.Message(1, 7, 100, "hello");
        bytes[SenderMessageCodec.HeaderBytes] ^= 1;
        Assert.Equal(SignatureVerdict.BadSignature, new SenderSignatureCheck(_w.Keys).Verify(SenderMessageCodec.Decode(bytes)));
    }

    [Fact]
    public void A_signature_for_one_sender_does_not_pass_as_another()
    {
        var region = SenderMessageCodec.EncodeSignedRegion(2, 1, 100, [1, 2, 3]);
        var forged = SenderMessageCodec.SignSingle(region, _w.SenderSigning[1]);
        Assert.Equal(SignatureVerdict.BadSignature, new SenderSignatureCheck(_w.Keys).Verify(SenderMessageCodec.Decode(forged)));
    }

    [Fact]
    public void Frame_mac_covers_pre_sq_and_body()
    {
        var body = _w.Message(1, 1, 100, "x");
        var frame = _w.Frame(1, 10, body);
        var f = SenderFrameCodec.Decode(frame);
        Assert.Equal(10, f.PreSq);
        Assert.True(SenderFrameCodec.VerifyMac(frame, _w.SenderPreSqRing(1, 10)));
        Assert.False(SenderFrameCodec.VerifyMac(frame, _w.SenderPreSqRing(1, 11)));
        frame[10] ^= 0x40;
        Assert.False(SenderFrameCodec.VerifyMac(frame, _w.SenderPreSqRing(1, 10)));
    }

    [Fact]
    public void Other_structures_round_trip()
    {
        var ack = AckRequestCodec.Decode(AckRequestCodec.Encode(1, 50, 40, 9, _w.SenderSigning[1]));
        Assert.Equal((1, 50L, 40L, 9L), (ack.Sender, ack.LastSentSeq, ack.LowestPending, ack.Nonce));
        Assert.True(AckRequestCodec.VerifySignature(ack, _w.SenderSigning[1]));

        var ring = _w.ReplicaSenderRing(2, 1);
        var resBytes = AckResponseCodec.Encode(2, 1, 1234, 77, 11, 9, ring);
        Assert.Equal(new AckResponse(2, 1, 1234, 77, 11, 9, 1), AckResponseCodec.Decode(resBytes));
        Assert.True(AckResponseCodec.VerifyMac(resBytes, ring));

        Assert.Equal(new LoadWarning(10, 950), LoadWarningCodec.Decode(LoadWarningCodec.Encode(new LoadWarning(10, 950))));
        Assert.Equal(new ExecuteResult(3, 2, 1), ExecuteResultCodec.Decode(ExecuteResultCodec.Encode(new ExecuteResult(3, 2, 1))));

        var rack = ReceiverAckCodec.Decode(ReceiverAckCodec.Encode(100, [new(1, 5), new(3, 9)], _w.ReceiverSigning[100]));
        Assert.Equal([new DeliveredCursor(1, 5), new DeliveredCursor(3, 9)], rack.Cursors);
        Assert.True(ReceiverAckCodec.VerifySignature(rack, _w.ReceiverSigning[100]));

        var d = TaggedHash.DataDigest("body"u8);
        var outRing = _w.ReplicaReceiverRing(0, 100);
        var outBytes = ReplicaOutputCodec.Encode(0, 100, 5, [new OutputItem(1, 4, 2, d, "body"u8.ToArray()), new OutputItem(2, 9, 1, d, null)], outRing);
        var o = ReplicaOutputCodec.Decode(outBytes);
        Assert.Equal((0, 100, 5L, 2), (o.Replica, o.Receiver, o.BatchNo, o.Items.Count));
        Assert.Equal("body"u8.ToArray(), o.Items[0].Body!.Value.ToArray());
        Assert.Null(o.Items[1].Body);
        Assert.True(ReplicaOutputCodec.VerifyMac(outBytes, outRing));
        Assert.False(ReplicaOutputCodec.VerifyMac(outBytes, _w.ReplicaReceiverRing(1, 100)));

        var fr = BodyFetchCodec.DecodeRequest(BodyFetchCodec.EncodeRequest(100, 2, 3, [new BodyWanted(1, 2, d)], outRing));
        Assert.Equal(new BodyWanted(1, 2, d), fr.Items.Single());
        var fs = BodyFetchCodec.DecodeResponse(BodyFetchCodec.EncodeResponse(2, 100, 3, [new FetchedBody(1, 2, 4, "body"u8.ToArray())], outRing));
        Assert.Equal("body"u8.ToArray(), fs.Items.Single().Body.ToArray());

        var req = OrderingRequestCodec.Decode(OrderingRequestCodec.Encode(10, [_w.Message(1, 1, 100, "a"), LoadWarningCodec.Encode(new LoadWarning(10, 1))]));
        Assert.Equal(10, req.Origin);
        Assert.Equal(2, req.Items.Count);
    }

    [Fact]
    public void Domain_tags_are_distinct()
    {
        var tags = typeof(DomainTags).GetFields().Select(f => Convert.ToHexString((byte[])f.GetValue(null)!)).ToList();
        Assert.Equal(tags.Count, tags.Distinct().Count());
    }

    public static TheoryData<string> Decoders => new() { "sender", "frame", "ackreq", "ackres", "warn", "rack", "ordering", "output", "fetchreq", "fetchres", "result", "rulecmd", "rollbackcmd", "publishcmd", "ruleres" };

    /// <summary>Valid encodings mutated (bit flips, truncation, extension, splices, random bytes): decoders throw only the dedicated exception.</summary>
    [Theory]
    [MemberData(nameof(Decoders))]
    public void Fuzz_decoders_throw_only_MalformedEnvelopeException(string which)
    {
        var ring = _w.ReplicaReceiverRing(0, 100);
        var d = TaggedHash.DataDigest("x"u8);
        var region = SenderMessageCodec.EncodeSignedRegion(1, 3, 100, new byte[40]);
        var batch = Sender.BatchSigner.Sign(1, [region, SenderMessageCodec.EncodeSignedRegion(1, 4, 100, [1]), SenderMessageCodec.EncodeSignedRegion(1, 5, 100, [2])], _w.SenderSigning[1]);
        (byte[] Seed, Action<byte[]> Decode) c = which switch
        {
            "sender" => (batch[2], b => SenderMessageCodec.Decode(b)),
            "frame" => (_w.Frame(1, 10, batch[0]), b => SenderFrameCodec.Decode(b)),
            "ackreq" => (AckRequestCodec.Encode(1, 9, 3, 4, _w.SenderSigning[1]), b => AckRequestCodec.Decode(b)),
            "ackres" => (AckResponseCodec.Encode(1, 1, 5, 5, 10, 3, 2, [new MessageRejection(3, RejectionReason.RuleDenied, "route not allowed")], ring), b => AckResponseCodec.Decode(b)),
            "warn" => (LoadWarningCodec.Encode(new LoadWarning(10, 900)), b => LoadWarningCodec.Decode(b)),
            "rack" => (ReceiverAckCodec.Encode(100, [new(1, 5), new(2, 6)], _w.ReceiverSigning[100]), b => ReceiverAckCodec.Decode(b)),
            "ordering" => (OrderingRequestCodec.Encode(10, [batch[0], batch[1]]), b => OrderingRequestCodec.Decode(b)),
            "output" => (ReplicaOutputCodec.Encode(0, 100, 1, [new OutputItem(1, 1, 1, d, "x"u8.ToArray()), new OutputItem(1, 2, 2, d, null)], ring), b => ReplicaOutputCodec.Decode(b)),
            "fetchreq" => (BodyFetchCodec.EncodeRequest(100, 1, 1, [new BodyWanted(1, 1, d)], ring), b => BodyFetchCodec.DecodeRequest(b)),
            "fetchres" => (BodyFetchCodec.EncodeResponse(1, 100, 1, [new FetchedBody(1, 1, 1, "x"u8.ToArray())], ring), b => BodyFetchCodec.DecodeResponse(b)),
            "rulecmd" => (RuleSetCommandCodec.Sign(RuleSetCommandCodec.EncodeRegion(RuleSetOp.Activate, 1, 2, 9, "{\"version\":2}"u8, "{\"signer\":\"x\"}"u8), _w.SenderSigning[1]),
                b => RuleSetCommandCodec.Decode(b)),
            "rollbackcmd" => (RuleSetCommandCodec.Sign(RuleSetCommandCodec.EncodeRegion(RuleSetOp.Rollback, 2, 1, 10, [], []), _w.SenderSigning[1]), b => RuleSetCommandCodec.Decode(b)),
            "publishcmd" => (RuleSetCommandCodec.EncodePublish(2, "{\"version\":2}"u8, "{\"signer\":\"x\"}"u8), b => RuleSetCommandCodec.Decode(b)),
            "ruleres" => (RuleSetResultCodec.Encode(new RuleSetResult(true, 2, 17, "activated version 2 é")), b => RuleSetResultCodec.Decode(b)),
            _ => (ExecuteResultCodec.Encode(new ExecuteResult(1, 2, 3)), b => ExecuteResultCodec.Decode(b)),
        };
        c.Decode(c.Seed);
        var rng = new Random(20_240_601 + which.Sum(ch => ch));
        var malformed = 0;
        for (var i = 0; i < 20_000; i++)
        {
            var input = Mutate(c.Seed, rng);
            try
            {
                c.Decode(input);
            }
            catch (MalformedEnvelopeException)
            {
                malformed++;
            }
        }
        Assert.True(malformed > 1000, $"only {malformed} of the mutations were rejected: the fuzzer is not exercising the decoder");
    }

    internal static byte[] Mutate(byte[] seed, Random rng)
    {
        var b = seed.ToArray();
        switch (rng.Next(7))
        {
            case 0:
                for (var k = rng.Next(1, 4); k > 0; k--)
                {
                    b[rng.Next(b.Length)] ^= (byte)(1 << rng.Next(8));
                }
                return b;
            case 1:
                return b[..rng.Next(b.Length)];
            case 2:
                return [.. b, .. Enumerable.Range(0, rng.Next(1, 20)).Select(_ => (byte)rng.Next(256))];
            case 3:
                b[rng.Next(b.Length)] = (byte)rng.Next(256);
                return b;
            case 4:
            {
                // Overwrite a 4-byte window with an extreme value (length and count fields).
                var at = rng.Next(Math.Max(1, b.Length - 4));
                var v = rng.Next(3) switch { 0 => uint.MaxValue, 1 => 0x8000_0000u, _ => (uint)rng.Next(0, 1 << 20) };
                for (var k = 0; k < 4 && at + k < b.Length; k++)
                {
                    b[at + k] = (byte)(v >> (8 * k));
                }
                return b;
            }
            case 5:
            {
                var cut = rng.Next(b.Length);
                var len = rng.Next(1, 16);
                return [.. b[..cut], .. b[Math.Min(b.Length, cut + len)..], .. b[cut..Math.Min(b.Length, cut + len)]];
            }
            default:
            {
                var r = new byte[rng.Next(0, 64)];
                rng.NextBytes(r);
                if (r.Length > 0 && rng.Next(2) == 0)
                {
                    r[0] = seed[0];
                }
                return r;
            }
        }
    }
}
