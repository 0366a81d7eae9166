using System.Security.Cryptography;
using SieveQ.Bft.Protocol;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// <c>&lt;sender, seq, receiver, DATA, auth&gt;</c>, the paper's message (1) without the MAC (which is
/// a property of the hop to one pre-SQ, see <see cref="SenderFrame"/>). Decoded views slice the input:
/// <see cref="Encoded"/> is the exact bytes received, <see cref="SignedRegion"/> its signed prefix.
/// </summary>
public sealed record SenderMessage(int Sender, long Seq, int Receiver, ReadOnlyMemory<byte> Data, SenderAuth Auth, ReadOnlyMemory<byte> SignedRegion, ReadOnlyMemory<byte> Encoded);

/// <summary>
/// Layout: <c>u8 kind=0x01 | u32 sender | u64 seq | u32 receiver | u32 len | DATA</c> (the signed
/// region) then <c>u8 authKind</c> and either <c>64 signature</c> or
/// <c>u32 leafIndex | u32 leafCount | u8 depth | depth x 32 path | 64 rootSignature</c>.
/// </summary>
public static class SenderMessageCodec
{
    /// <summary>Bytes in the signed region before DATA.</summary>
    public const int HeaderBytes = 1 + 4 + 8 + 4 + 4;

    public static byte[] EncodeSignedRegion(int sender, long seq, int receiver, ReadOnlySpan<byte> data)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(seq, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(data.Length, EnvelopeLimits.MaxDataBytes);
        using var w = new CanonicalWriter(HeaderBytes + data.Length);
        w.U8((byte)StructureKind.SenderMessage);
        w.Id(sender);
        w.Seq(seq);
        w.Id(receiver);
        w.Bytes(data);
        return w.ToArray();
    }

    /// <summary>Input to a per-message signature: tag || signed region.</summary>
    public static byte[] SigningInput(ReadOnlySpan<byte> signedRegion) => TaggedHash.Concat(DomainTags.SenderMessage, signedRegion);

    /// <summary>Input to a batch root signature: tag || u32 sender || u32 leafCount || root.</summary>
    public static byte[] RootSigningInput(int sender, int leafCount, Digest root)
    {
        using var w = new CanonicalWriter(64);
        w.Raw(DomainTags.BatchRoot);
        w.Id(sender);
        w.Id(leafCount);
        root.CopyTo(w.Reserve(Digest.Size));
        return w.ToArray();
    }

    public static byte[] SignSingle(ReadOnlySpan<byte> signedRegion, ECDsa key)
    {
        ArgumentNullException.ThrowIfNull(key);
        return Encode(signedRegion, SenderAuth.Single(key.SignData(SigningInput(signedRegion), HashAlgorithmName.SHA256)));
    }

    public static byte[] Encode(ReadOnlySpan<byte> signedRegion, SenderAuth auth)
    {
        ArgumentNullException.ThrowIfNull(auth);
        if (auth.Signature.Length != EnvelopeLimits.SignatureBytes)
        {
            throw new ArgumentException($"signature must be {EnvelopeLimits.SignatureBytes} bytes", nameof(auth));
        }
        using var w = new CanonicalWriter(signedRegion.Length + 1 + 12 + auth.Path.Length + EnvelopeLimits.SignatureBytes);
        w.Raw(signedRegion);
        w.U8((byte)auth.Kind);
        if (auth.Kind == SenderAuthKind.Batch)
        {
            if (auth.Path.Length % EnvelopeLimits.HashBytes != 0 || auth.Path.Length / EnvelopeLimits.HashBytes > EnvelopeLimits.MaxMerkleDepth)
            {
                throw new ArgumentException("bad Merkle path length", nameof(auth));
            }
            w.Id(auth.LeafIndex);
            w.Id(auth.LeafCount);
            w.U8((byte)(auth.Path.Length / EnvelopeLimits.HashBytes));
            w.Raw(auth.Path.Span);
        }
        w.Raw(auth.Signature.Span);
        return w.ToArray();
    }

    public static SenderMessage Decode(ReadOnlyMemory<byte> bytes)
    {
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.SenderMessage);
        var sender = r.Id("sender");
        var seq = r.Seq("seq");
        if (seq < 1)
        {
            throw new MalformedEnvelopeException("seq: sequence numbers start at 1");
        }
        var receiver = r.Id("receiver");
        var dataLen = r.Count(EnvelopeLimits.MaxDataBytes, "data length");
        var dataAt = r.Position;
        r.Take(dataLen, "data");
        var regionEnd = r.Position;
        var kind = r.U8("authKind");
        SenderAuth auth;
        switch ((SenderAuthKind)kind)
        {
            case SenderAuthKind.Signature:
            {
                var sigAt = r.Position;
                r.Take(EnvelopeLimits.SignatureBytes, "signature");
                auth = SenderAuth.Single(bytes.Slice(sigAt, EnvelopeLimits.SignatureBytes));
                break;
            }
            case SenderAuthKind.Batch:
            {
                var index = r.Id("leafIndex");
                var count = r.Id("leafCount");
                if (count < 1 || index >= count)
                {
                    throw new MalformedEnvelopeException($"leaf index {index} outside batch of {count}");
                }
                var depth = r.U8("path depth");
                if (depth > EnvelopeLimits.MaxMerkleDepth)
                {
                    throw new MalformedEnvelopeException($"path depth {depth} above {EnvelopeLimits.MaxMerkleDepth}");
                }
                var pathAt = r.Position;
                r.Take(depth * EnvelopeLimits.HashBytes, "path");
                var sigAt = r.Position;
                r.Take(EnvelopeLimits.SignatureBytes, "root signature");
                auth = SenderAuth.InBatch(bytes.Slice(sigAt, EnvelopeLimits.SignatureBytes), index, count, bytes.Slice(pathAt, depth * EnvelopeLimits.HashBytes));
                break;
            }
            default:
                throw new MalformedEnvelopeException($"authKind {kind} unknown");
        }
        r.End("sender message");
        return new SenderMessage(sender, seq, receiver, bytes.Slice(dataAt, dataLen), auth, bytes[..regionEnd], bytes);
    }
}
