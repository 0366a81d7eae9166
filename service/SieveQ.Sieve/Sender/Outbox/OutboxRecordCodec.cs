using System.Buffers.Binary;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Sender.Outbox;

/// <summary>What <see cref="OutboxRecordCodec.Scan"/> found: the whole records, and where the file stops being whole.</summary>
public sealed record OutboxScan(IReadOnlyList<OutboxRecord> Records, long ValidLength, bool TornTail);

/// <summary>
/// The outbox file format. <c>"SQOUTBX1"</c>, then records <c>u32 bodyLength | u32 crc32c(bodyLength bytes || body) | body</c>,
/// little-endian, with body <c>01 | u64 seq | u32 receiver | u32 dataLength | data</c> (a message) or
/// <c>02 | u64 upTo</c> (acknowledged up to). Records are only appended, so a crash can damage only the
/// last one: a record that runs past the end of the file, or the last record failing its check, or
/// zeros after the last whole record, is a torn tail and is cut. A failing record with more bytes after
/// it is damage, not a crash, and the scan refuses the file instead of dropping the accepted messages behind it.
/// </summary>
public static class OutboxRecordCodec
{
    public const int HeaderBytes = 8;
    public const int RecordOverheadBytes = 8;
    private const int MessageFieldsBytes = 1 + 8 + 4 + 4;
    private const int AcknowledgedBodyBytes = 1 + 8;
    public static readonly int MaxBodyBytes = MessageFieldsBytes + EnvelopeLimits.MaxDataBytes;

    public static ReadOnlySpan<byte> Header => "SQOUTBX1"u8;

    /// <summary>The bytes a message record takes in the file.</summary>
    public static int MessageRecordBytes(int dataLength) => RecordOverheadBytes + MessageFieldsBytes + dataLength;

    public static byte[] EncodeMessage(long seq, int receiver, ReadOnlySpan<byte> data)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(seq, 1);
        ArgumentOutOfRangeException.ThrowIfNegative(receiver);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(data.Length, EnvelopeLimits.MaxDataBytes, nameof(data));
        var record = new byte[MessageRecordBytes(data.Length)];
        var body = record.AsSpan(RecordOverheadBytes);
        body[0] = (byte)OutboxRecordKind.Message;
        BinaryPrimitives.WriteInt64LittleEndian(body[1..], seq);
        BinaryPrimitives.WriteInt32LittleEndian(body[9..], receiver);
        BinaryPrimitives.WriteInt32LittleEndian(body[13..], data.Length);
        data.CopyTo(body[MessageFieldsBytes..]);
        Seal(record);
        return record;
    }

    public static byte[] EncodeAcknowledged(long upTo)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(upTo);
        var record = new byte[RecordOverheadBytes + AcknowledgedBodyBytes];
        var body = record.AsSpan(RecordOverheadBytes);
        body[0] = (byte)OutboxRecordKind.Acknowledged;
        BinaryPrimitives.WriteInt64LittleEndian(body[1..], upTo);
        Seal(record);
        return record;
    }

    /// <summary>Reads a whole outbox file. An empty file, or one cut inside its header, is an empty outbox.</summary>
    /// <exception cref="OutboxCorruptException">Not an outbox file, or a record other than the last fails its check.</exception>
    public static OutboxScan Scan(ReadOnlyMemory<byte> file)
    {
        var span = file.Span;
        if (span.Length < HeaderBytes)
        {
            if (!Header[..span.Length].SequenceEqual(span))
            {
                throw new OutboxCorruptException("not an outbox file (wrong header)");
            }
            return new OutboxScan([], 0, span.Length > 0);
        }
        if (!span[..HeaderBytes].SequenceEqual(Header))
        {
            throw new OutboxCorruptException("not an outbox file (wrong header)");
        }
        var records = new List<OutboxRecord>();
        long at = HeaderBytes;
        while (at < span.Length)
        {
            var rest = span[(int)at..];
            if (rest.Length < RecordOverheadBytes)
            {
                return new OutboxScan(records, at, true);
            }
            var bodyLength = BinaryPrimitives.ReadUInt32LittleEndian(rest);
            if (bodyLength == 0 || bodyLength > (uint)MaxBodyBytes)
            {
                if (rest.IndexOfAnyExcept((byte)0) < 0)
                {
                    return new OutboxScan(records, at, true);
                }
                throw Corrupt(at, $"impossible record length {bodyLength}");
            }
            if (bodyLength > rest.Length - RecordOverheadBytes)
            {
                return new OutboxScan(records, at, true);
            }
            var length = RecordOverheadBytes + (int)bodyLength;
            var body = rest.Slice(RecordOverheadBytes, (int)bodyLength);
            if (Crc32C.Compute(rest[..4], body) != BinaryPrimitives.ReadUInt32LittleEndian(rest[4..]))
            {
                if (length == rest.Length)
                {
                    return new OutboxScan(records, at, true);
                }
                throw Corrupt(at, "record fails its CRC-32C and whole records follow it");
            }
            records.Add(Decode(file.Slice((int)at + RecordOverheadBytes, (int)bodyLength), at, length));
            at += length;
        }
        return new OutboxScan(records, at, false);
    }

    private static OutboxRecord Decode(ReadOnlyMemory<byte> body, long at, int length)
    {
        var b = body.Span;
        switch ((OutboxRecordKind)b[0])
        {
            case OutboxRecordKind.Message when b.Length >= MessageFieldsBytes:
                var seq = BinaryPrimitives.ReadInt64LittleEndian(b[1..]);
                var receiver = BinaryPrimitives.ReadInt32LittleEndian(b[9..]);
                var dataLength = BinaryPrimitives.ReadInt32LittleEndian(b[13..]);
                if (seq < 1 || receiver < 0 || dataLength != b.Length - MessageFieldsBytes)
                {
                    throw Corrupt(at, "message record with impossible fields");
                }
                return new OutboxRecord(OutboxRecordKind.Message, seq, receiver, body[MessageFieldsBytes..], at, length);
            case OutboxRecordKind.Acknowledged when b.Length == AcknowledgedBodyBytes:
                var upTo = BinaryPrimitives.ReadInt64LittleEndian(b[1..]);
                if (upTo < 0)
                {
                    throw Corrupt(at, "acknowledgement record with a negative number");
                }
                return new OutboxRecord(OutboxRecordKind.Acknowledged, upTo, 0, ReadOnlyMemory<byte>.Empty, at, length);
            default:
                throw Corrupt(at, $"unknown record kind {b[0]} or length {b.Length}");
        }
    }

    private static void Seal(Span<byte> record)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(record, (uint)(record.Length - RecordOverheadBytes));
        BinaryPrimitives.WriteUInt32LittleEndian(record[4..], Crc32C.Compute(record[..4], record[RecordOverheadBytes..]));
    }

    private static OutboxCorruptException Corrupt(long at, string what) => new($"outbox record at byte {at}: {what}");
}
