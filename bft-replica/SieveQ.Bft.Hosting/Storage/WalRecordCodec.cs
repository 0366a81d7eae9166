using System.Buffers.Binary;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Storage;

/// <summary>
/// On-disk record: <c>[u32 length of type+body][u32 CRC-32C of type+body][u8 type][body]</c>.
/// Batches and certificates reuse the wire codec so the log never invents a second encoding of them:
/// a decision is stored as the PROPOSE that would carry it, a prepared certificate as a STOPDATA holding
/// only that certificate. A decision whose batch a prepared record earlier in the same segment already
/// holds is stored as a reference to it (<c>[i64 consensus id][32 batch hash]</c>), so a prepared-then-decided
/// batch is written once, not twice; <see cref="WriteAheadLog"/> resolves references as it reads.
/// </summary>
public static class WalRecordCodec
{
    public const int HeaderBytes = 8;
    /// <summary>Largest record accepted on read: a checkpoint holds a full snapshot.</summary>
    public const int MaxRecordBytes = WireLimits.MaxSnapshotBytes + 1024;

    private const byte RegencyType = 1, PreparedType = 2, DecisionType = 3, CheckpointType = 4, DecisionReferenceType = 5;

    /// <summary>Appends one framed record to <paramref name="output"/>.</summary>
    public static void Encode(DurableRecord record, RecordBuffer output)
    {
        var start = output.WrittenCount;
        output.Advance(HeaderBytes);
        switch (record)
        {
            case RegencyRecord r:
                Type(output, RegencyType);
                BinaryPrimitives.WriteInt32LittleEndian(output.GetSpan(4), r.Regency);
                output.Advance(4);
                break;
            case PreparedRecord p:
                Type(output, PreparedType);
                MessageCodec.Encode(new StopData(0, 0, 0, [p.Certificate], []), output);
                break;
            case DecisionRecord d:
                Type(output, DecisionType);
                MessageCodec.Encode(new Propose(0, 0, d.ConsensusId, d.Value), output);
                break;
            case DecisionReference d:
                Type(output, DecisionReferenceType);
                InstanceAndDigest(output, d.ConsensusId, d.BatchHash);
                break;
            case CheckpointRecord c:
                Type(output, CheckpointType);
                InstanceAndDigest(output, c.ConsensusId, c.StateHash);
                c.State.CopyTo(output.GetSpan(c.State.Length));
                output.Advance(c.State.Length);
                break;
            default:
                throw new ArgumentException($"no log encoding for {record.GetType().Name}", nameof(record));
        }
        WriteHeader(output.Written[start..]);
    }

    /// <summary>Fills the header of <paramref name="framed"/> (header space, then type and body) from what follows it.</summary>
    internal static void WriteHeader(Span<byte> framed)
    {
        var body = framed[HeaderBytes..];
        BinaryPrimitives.WriteUInt32LittleEndian(framed, (uint)body.Length);
        BinaryPrimitives.WriteUInt32LittleEndian(framed[4..], Crc32C.Compute(body));
    }

    public static byte[] Encode(DurableRecord record)
    {
        var buffer = new RecordBuffer(256);
        Encode(record, buffer);
        return buffer.Written.ToArray();
    }

    private static void InstanceAndDigest(RecordBuffer output, long consensusId, Digest digest)
    {
        BinaryPrimitives.WriteInt64LittleEndian(output.GetSpan(8), consensusId);
        output.Advance(8);
        digest.CopyTo(output.GetSpan(Digest.Size));
        output.Advance(Digest.Size);
    }

    private static void Type(RecordBuffer output, byte type)
    {
        output.GetSpan(1)[0] = type;
        output.Advance(1);
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
        return body[0] switch
        {
            RegencyType when rest.Length == 4 => new RegencyRecord(BinaryPrimitives.ReadInt32LittleEndian(rest)),
            PreparedType => MessageCodec.Decode(rest) is StopData { Certificates.Count: 1 } sd ? new PreparedRecord(sd.Certificates[0]) : null,
            DecisionType => MessageCodec.Decode(rest) is Propose p ? new DecisionRecord(p.ConsensusId, p.Value) : null,
            DecisionReferenceType when rest.Length == 8 + Digest.Size =>
                new DecisionReference(BinaryPrimitives.ReadInt64LittleEndian(rest), new Digest(rest.Slice(8, Digest.Size))),
            CheckpointType when rest.Length >= 8 + Digest.Size =>
                new CheckpointRecord(BinaryPrimitives.ReadInt64LittleEndian(rest), new Digest(rest.Slice(8, Digest.Size)), rest[(8 + Digest.Size)..].ToArray()),
            _ => null,
        };
    }
}

/// <summary>
/// A decision as the log stores it when a prepared record earlier in the same segment holds its batch.
/// Only the log reads and writes it; recovery gets the <see cref="DecisionRecord"/> it stands for.
/// </summary>
public sealed record DecisionReference(long ConsensusId, Digest BatchHash) : DurableRecord;
