using System.Buffers;
using System.Security.Cryptography;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Hosting.Transport;

namespace SieveQ.Bft.Tests.Hosting;

public sealed class FrameCodecTests
{
    private static readonly DirectionKeys Keys = new(SHA256.HashData("frame-test"u8), SHA256.HashData("frame-test-iv"u8)[..DirectionKeys.IvBytes]);

    private static byte[] Seal(ulong seq, byte[] payload, DirectionKeys? keys = null)
    {
        using var cipher = new FrameCipher(keys ?? Keys);
        var frame = new byte[FrameCodec.SingleMessageFrameSize(payload.Length)];
        FrameCodec.Seal(frame, seq, payload, cipher);
        return frame;
    }

    private static bool Open(byte[] frame, ulong seq, out byte[] payload, DirectionKeys? keys = null)
    {
        using var cipher = new FrameCipher(keys ?? Keys);
        var plain = new byte[Math.Max(0, FrameCodec.BodyLength(frame.Length))];
        var ok = FrameCodec.TryOpen(frame, seq, cipher, plain);
        payload = [];
        if (ok)
        {
            ReadOnlySpan<byte> body = plain;
            Assert.True(FrameCodec.TryNextRecord(ref body, out var message));
            payload = message.ToArray();
            Assert.False(FrameCodec.TryNextRecord(ref body, out _));
        }
        return ok;
    }

    [Fact]
    public void SealedFrameOpensToThePayload()
    {
        var frame = Seal(7, [1, 2, 3]);
        Assert.True(Open(frame, 7, out var payload));
        Assert.Equal([1, 2, 3], payload);
    }

    [Fact]
    public void AnyFlippedBitFailsAuthentication()
    {
        var frame = Seal(0, [.. Enumerable.Range(0, 40).Select(i => (byte)i)]);
        for (var i = 0; i < frame.Length; i++)
        {
            var copy = (byte[])frame.Clone();
            copy[i] ^= 0x10;
            Assert.False(Open(copy, 0, out _), $"flip at byte {i} went unnoticed");
        }
    }

    [Fact]
    public void WrongSequenceFailsSoReplaysAndReordersAreRejected()
    {
        var frame = Seal(5, [9]);
        Assert.False(Open(frame, 4, out _));
        Assert.False(Open(frame, 6, out _));
    }

    [Fact]
    public void TheBodyIsEncryptedAndOnlyTheHeaderTravelsInClear()
    {
        var payload = "payment 4711 EUR to plant 3"u8.ToArray();
        var frame = Seal(3, payload);
        Assert.Equal(-1, frame.AsSpan().IndexOf(payload));
        // Not even a 4-byte run of the payload survives.
        for (var i = 0; i + 4 <= payload.Length; i++)
        {
            Assert.Equal(-1, frame.AsSpan(FrameCodec.HeaderBytes).IndexOf(payload.AsSpan(i, 4)));
        }
        Assert.Equal(3ul, BitConverter.ToUInt64(frame, FrameCodec.LengthBytes));
    }

    [Fact]
    public void EqualPayloadsUnderSuccessiveSequencesEncryptDifferently()
    {
        // Distinct nonces per sequence: a repeated message is not recognisable on the wire.
        byte[] payload = [.. Enumerable.Repeat((byte)7, 64)];
        Assert.False(Seal(0, payload).AsSpan(FrameCodec.HeaderBytes).SequenceEqual(Seal(1, payload).AsSpan(FrameCodec.HeaderBytes)));
    }

    [Fact]
    public void AFrameSealedUnderTheOtherDirectionsKeysDoesNotOpen()
    {
        var other = new DirectionKeys(SHA256.HashData("other-direction"u8), Keys.Iv);
        Assert.False(Open(Seal(0, [1, 2, 3], other), 0, out _));
        var otherIv = new DirectionKeys(Keys.Key, SHA256.HashData("other-iv"u8)[..DirectionKeys.IvBytes]);
        Assert.False(Open(Seal(0, [1, 2, 3], otherIv), 0, out _));
    }

    [Fact]
    public void AKeyRefusesToSealBeyondItsBudget()
    {
        using var cipher = new FrameCipher(Keys, maxSealedBytes: 100);
        var frame = new byte[FrameCodec.SingleMessageFrameSize(60)];
        FrameCodec.Seal(frame, 0, new byte[60], cipher);
        Assert.False(cipher.Exhausted);
        FrameCodec.Seal(frame, 1, new byte[60], cipher);
        Assert.True(cipher.Exhausted);
        Assert.Throws<CryptographicException>(() => FrameCodec.Seal(frame, 2, new byte[60], cipher));
    }

    [Fact]
    public void ReaderWaitsForWholeFramesAcrossSegments()
    {
        var a = Seal(0, [1, 2, 3]);
        var b = Seal(1, [4]);
        byte[] stream = [.. a, .. b];
        var partial = new ReadOnlySequence<byte>(stream, 0, a.Length + 2);
        Assert.True(FrameCodec.TryReadFrame(ref partial, out var first));
        Assert.Equal(a.Length, first.Length);
        Assert.False(FrameCodec.TryReadFrame(ref partial, out _));
    }

    [Fact]
    public void SeveralMessagesShareOneFrameAndBadRecordLengthsAreMalformed()
    {
        var frame = new byte[FrameCodec.Overhead + 4 + 2 + 4 + 3];
        var body = FrameCodec.BodyOf(frame);
        body = body[FrameCodec.WriteRecord(body, [1, 2])..];
        FrameCodec.WriteRecord(body, [3, 4, 5]);
        using (var seal = new FrameCipher(Keys))
        {
            FrameCodec.SealInPlace(frame, 0, seal);
        }
        using var open = new FrameCipher(Keys);
        // Decrypted in place, as the receive loop does with a frame it had to gather from several segments.
        Assert.True(FrameCodec.TryOpen(frame, 0, open, FrameCodec.BodyOf(frame)));
        ReadOnlySpan<byte> records = FrameCodec.BodyOf(frame);
        Assert.True(FrameCodec.TryNextRecord(ref records, out var a));
        Assert.True(FrameCodec.TryNextRecord(ref records, out var b));
        Assert.Equal([1, 2], a.ToArray());
        Assert.Equal([3, 4, 5], b.ToArray());
        Assert.False(FrameCodec.TryNextRecord(ref records, out _));

        byte[] overlong = [10, 0, 0, 0, 1, 2];
        byte[] empty = [0, 0, 0, 0];
        Assert.Throws<MalformedMessageException>(() => { ReadOnlySpan<byte> r = overlong; FrameCodec.TryNextRecord(ref r, out _); });
        Assert.Throws<MalformedMessageException>(() => { ReadOnlySpan<byte> r = empty; FrameCodec.TryNextRecord(ref r, out _); });
    }

    [Theory]
    [InlineData(0u)]
    [InlineData(10u)]
    [InlineData(uint.MaxValue)]
    [InlineData((uint)(WireLimits.MaxFrameBytes + FrameCodec.SequenceBytes + FrameCodec.TagBytes + 1))]
    public void LengthOutsideTheLimitsIsMalformed(uint length)
    {
        var bytes = new byte[64];
        BitConverter.TryWriteBytes(bytes, length);
        var seq = new ReadOnlySequence<byte>(bytes);
        Assert.Throws<MalformedMessageException>(() => FrameCodec.TryReadFrame(ref seq, out _));
    }
}
