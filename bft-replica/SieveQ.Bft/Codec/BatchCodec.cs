using System.Buffers;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Codec;

/// <summary>Canonical batch layout: the bytes the batch hash is taken over.</summary>
public static class BatchCodec
{
    private static ReadOnlySpan<byte> Tag => "SQBFT/BATCH/v2"u8;

    public static byte[] Encode(Batch batch)
    {
        var buf = new ArrayBufferWriter<byte>(EncodedSize(batch));
        Write(new WireWriter(buf), batch);
        return buf.WrittenSpan.ToArray();
    }

    /// <summary>
    /// SHA-256 of <see cref="Encode"/>'s bytes, written by the same <see cref="Write"/> straight into the
    /// hash: a full batch is megabytes, and encoding it into a fresh array only to hash it cost a tenth of
    /// a replica's CPU at full load.
    /// </summary>
    public static Digest ComputeHash(Batch batch)
    {
        using var hashing = new HashingBufferWriter();
        Write(new WireWriter(hashing), batch);
        return hashing.Finish();
    }

    public static int EncodedSize(Batch batch)
    {
        var size = Tag.Length + 8 + 4;
        foreach (var r in batch.Requests)
        {
            size += 4 + 8 + 4 + r.Payload.Length + 4 + r.Proof.Length;
        }
        return size;
    }

    internal static void Write(WireWriter w, Batch batch)
    {
        w.Raw(Tag);
        w.I64(batch.Timestamp);
        w.I32(batch.Requests.Count);
        foreach (var r in batch.Requests)
        {
            w.I32(r.From);
            w.I64(r.Sequence);
            w.Bytes(r.Payload);
            w.Bytes(r.Proof);
        }
    }

    /// <summary>
    /// Reads a batch and takes its hash over the bytes just read: the layout has exactly one encoding
    /// per batch (fixed-width fields, length-prefixed payloads), so they are the canonical bytes.
    /// </summary>
    /// <param name="known">Payloads already held, shared instead of copied when the bytes are the same.</param>
    internal static Batch Read(ref WireReader r, IKnownRequestPayloads? known = null)
    {
        var start = r.Position;
        Span<byte> tag = stackalloc byte[Tag.Length];
        for (var i = 0; i < tag.Length; i++)
        {
            tag[i] = r.U8("batch tag");
        }
        if (!tag.SequenceEqual(Tag))
        {
            throw new MalformedMessageException("batch: wrong domain tag");
        }
        var ts = r.I64("batch timestamp");
        var n = r.Count(WireLimits.MaxRequestsPerBatch, "batch request count");
        var requests = new ClientRequest[n];
        for (var i = 0; i < n; i++)
        {
            requests[i] = ReadRequestBody(ref r, known);
        }
        return new Batch(ts, requests, Digest.Compute(r.ReadSince(start)));
    }

    internal static ClientRequest ReadRequestBody(ref WireReader r, IKnownRequestPayloads? known = null)
    {
        var client = r.NonNegative("request client");
        var seq = r.NonNegative64("request sequence");
        var bytes = r.Span(WireLimits.MaxPayloadBytes, "request payload");
        var payload = known?.ShareOrCopy(client, seq, bytes) ?? bytes.ToArray();
        return new ClientRequest(client, seq, payload) { Proof = r.Bytes(WireLimits.MaxRequestProofBytes, "request proof") };
    }

    public static Batch Decode(ReadOnlySpan<byte> bytes)
    {
        var r = new WireReader(bytes);
        var b = Read(ref r);
        r.End("batch");
        return b;
    }
}
