using System.Buffers.Binary;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Storage;

/// <summary>
/// On-disk record: <c>[u32 length of type+body][u32 CRC-32C of type+body][u8 type][body]</c>.
/// Batches and certificates reuse the wire codecs so the log never invents a second encoding of them.
/// </summary>
public static class WalRecordCodec
{
    public const int HeaderBytes = 8;
    /// <summary>Largest record accepted on read: a checkpoint holds a full snapshot.</summary>
    public const int MaxRecordBytes = WireLimits.MaxSnapshotBytes + 1024;

    private const byte RegencyType = 1, PreparedType = 2, DecisionType = 3, CheckpointType = 4;

    public static byte[] Encode(DurableRecord record)
    {
        byte[] body = record switch
        {
            RegencyRecord r => Concat(RegencyType, I32(r.Regency)),
            // A certificate has no stand-alone encoding; a STOPDATA carrying only it is the canonical one.
            PreparedRecord p => Concat(PreparedType, MessageCodec.Encode(new StopData(0, 0, 0, [p.Certificate], []))),
            DecisionRecord d => Concat(DecisionType, I64(d.ConsensusId), BatchCodec.Encode(d.Value)),
            CheckpointRecord c => Concat(CheckpointType, I64(c.ConsensusId), c.StateHash.ToArray(), c.State),
            _ => throw new ArgumentException($"no log encoding for {record.GetType().Name}", nameof(record)),
        };
        var framed = new byte[HeaderBytes + body.Length];
        BinaryPrimitives.WriteUInt32LittleEndian(framed, (uint)body.Length);
        BinaryPrimitives.WriteUInt32LittleEndian(framed.AsSpan(4), Crc32C.Compute(body));
        body.CopyTo(framed.AsSpan(HeaderBytes));
        return framed;
    }

    /// <summary>
    /// Reads the record at the front of <paramref name="data"/>. Returns false (and consumes nothing) for an
    /// incomplete, oversized or corrupt record: that is where a crash tore the tail, and reading stops there.
    /// </summary>
    public static bool TryDecode(ReadOnlySpan<byte> data, out DurableRecord? record, out int consumed)
    {
        record = null;
        consumed = 0;
        if (data.Length < HeaderBytes)
        {
            return false;
        }
        var length = BinaryPrimitives.ReadUInt32LittleEndian(data);
        if (length < 1 || length > MaxRecordBytes || data.Length - HeaderBytes < length)
        {
            return false;
        }
        var body = data.Slice(HeaderBytes, (int)length);
        if (Crc32C.Compute(body) != BinaryPrimitives.ReadUInt32LittleEndian(data[4..]))
        {
            return false;
        }
        try
        {
            record = DecodeBody(body);
        }
        catch (MalformedMessageException)
        {
            return false;
        }
        consumed = HeaderBytes + (int)length;
        return record is not null;
    }

    private static DurableRecord? DecodeBody(ReadOnlySpan<byte> body)
    {
        var rest = body[1..];
        switch (body[0])
        {
            case RegencyType when rest.Length == 4:
                return new RegencyRecord(BinaryPrimitives.ReadInt32LittleEndian(rest));
            case PreparedType:
                return MessageCodec.Decode(rest) is StopData { Certificates.Count: 1 } sd ? new PreparedRecord(sd.Certificates[0]) : null;
            case DecisionType when rest.Length > 8:
                return new DecisionRecord(BinaryPrimitives.ReadInt64LittleEndian(rest), BatchCodec.Decode(rest[8..]));
            case CheckpointType when rest.Length >= 8 + Digest.Size:
                return new CheckpointRecord(BinaryPrimitives.ReadInt64LittleEndian(rest), new Digest(rest.Slice(8, Digest.Size)), rest[(8 + Digest.Size)..].ToArray());
            default:
                return null;
        }
    }

    private static byte[] I32(int v)
    {
        var b = new byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(b, v);
        return b;
    }

    private static byte[] I64(long v)
    {
        var b = new byte[8];
        BinaryPrimitives.WriteInt64LittleEndian(b, v);
        return b;
    }

    private static byte[] Concat(byte type, params ReadOnlySpan<byte[]> parts)
    {
        var total = 1;
        foreach (var p in parts)
        {
            total += p.Length;
        }
        var result = new byte[total];
        result[0] = type;
        var at = 1;
        foreach (var p in parts)
        {
            p.CopyTo(result, at);
            at += p.Length;
        }
        return result;
    }
}
