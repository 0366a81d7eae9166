using System.Buffers.Binary;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;

namespace SieveQ.Controller.Audit;

/// <summary>
/// The audit log's record format, without any I/O: one compact JSON object per line,
/// <c>{"seq":N,"time":"yyyy-MM-ddTHH:mm:ss.fffZ","actor":..,"action":..,"target":..,"outcome":..,"prev":HEX,"hash":HEX}</c>.
/// The hash is SHA-256 over a binary form (domain tag, u64 seq, i64 Unix ms, four u32-length-prefixed UTF-8 strings,
/// prev), so it does not depend on JSON details; decoding re-encodes and compares byte for byte, so no byte of a
/// stored line can change (not even an equivalent escape) without the record being refused.
/// </summary>
public static class AuditRecordCodec
{
    public const int HashBytes = 32;
    public const int MaxActorChars = 256;
    public const int MaxActionChars = 64;
    public const int MaxTargetChars = 512;
    public const int MaxOutcomeChars = 1024;
    /// <summary>Above any line <see cref="Encode"/> can produce (every char escaped as \uXXXX), so a longer line is not a record.</summary>
    public const int MaxLineBytes = 6 * (MaxActorChars + MaxActionChars + MaxTargetChars + MaxOutcomeChars) + 512;

    private const string TimeFormat = "yyyy-MM-dd'T'HH:mm:ss.fff'Z'";
    private static readonly byte[] Domain = "SIEVEQ/AUDIT/v1"u8.ToArray();
    private static readonly JsonWriterOptions WriterOptions = new() { Indented = false, SkipValidation = false };

    /// <summary>The first record's previous hash: nothing came before it.</summary>
    public static byte[] GenesisHash => new byte[HashBytes];

    /// <summary>Builds the record that follows <paramref name="previousHash"/>, its hash computed; over-long fields are refused, not cut.</summary>
    public static AuditRecord Create(long sequence, long timeUnixMs, string actor, string action, string target, string outcome, byte[] previousHash)
    {
        ArgumentNullException.ThrowIfNull(previousHash);
        Check(actor, MaxActorChars, nameof(actor));
        Check(action, MaxActionChars, nameof(action));
        Check(target, MaxTargetChars, nameof(target));
        Check(outcome, MaxOutcomeChars, nameof(outcome));
        if (previousHash.Length != HashBytes || sequence < 1)
        {
            throw new ArgumentException("an audit record needs a sequence from 1 and a 32-byte previous hash");
        }
        var hash = HashOf(sequence, timeUnixMs, actor, action, target, outcome, previousHash);
        return new AuditRecord(sequence, timeUnixMs, actor, action, target, outcome, previousHash, hash);
    }

    public static byte[] HashOf(long sequence, long timeUnixMs, string actor, string action, string target, string outcome, byte[] previousHash)
    {
        ArgumentNullException.ThrowIfNull(previousHash);
        using var buffer = new MemoryStream();
        buffer.Write(Domain);
        Span<byte> number = stackalloc byte[8];
        BinaryPrimitives.WriteInt64BigEndian(number, sequence);
        buffer.Write(number);
        BinaryPrimitives.WriteInt64BigEndian(number, timeUnixMs);
        buffer.Write(number);
        foreach (var field in (ReadOnlySpan<string>)[actor, action, target, outcome])
        {
            var bytes = Encoding.UTF8.GetBytes(field);
            BinaryPrimitives.WriteUInt32BigEndian(number, (uint)bytes.Length);
            buffer.Write(number[..4]);
            buffer.Write(bytes);
        }
        buffer.Write(previousHash);
        return SHA256.HashData(buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
    }

    /// <summary>The record's line, without the newline.</summary>
    public static byte[] Encode(AuditRecord record)
    {
        ArgumentNullException.ThrowIfNull(record);
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer, WriterOptions))
        {
            json.WriteStartObject();
            json.WriteNumber("seq", record.Sequence);
            json.WriteString("time", record.Time.UtcDateTime.ToString(TimeFormat, CultureInfo.InvariantCulture));
            json.WriteString("actor", record.Actor);
            json.WriteString("action", record.Action);
            json.WriteString("target", record.Target);
            json.WriteString("outcome", record.Outcome);
            json.WriteString("prev", Convert.ToHexStringLower(record.PreviousHash));
            json.WriteString("hash", Convert.ToHexStringLower(record.Hash));
            json.WriteEndObject();
        }
        return buffer.ToArray();
    }

    /// <summary>Decodes one line (no newline) and checks its own hash; null with <paramref name="error"/> when it is not an intact record.</summary>
    public static AuditRecord? TryDecode(ReadOnlySpan<byte> line, out string error)
    {
        if (line.Length > MaxLineBytes)
        {
            error = $"line of {line.Length} bytes, above the {MaxLineBytes}-byte limit";
            return null;
        }
        AuditRecord record;
        try
        {
            using var doc = JsonDocument.Parse(line.ToArray());
            var root = doc.RootElement;
            var time = DateTime.ParseExact(root.GetProperty("time").GetString()!, TimeFormat, CultureInfo.InvariantCulture,
                DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal);
            record = new AuditRecord(
                root.GetProperty("seq").GetInt64(),
                new DateTimeOffset(time, TimeSpan.Zero).ToUnixTimeMilliseconds(),
                root.GetProperty("actor").GetString()!,
                root.GetProperty("action").GetString()!,
                root.GetProperty("target").GetString()!,
                root.GetProperty("outcome").GetString()!,
                Convert.FromHexString(root.GetProperty("prev").GetString()!),
                Convert.FromHexString(root.GetProperty("hash").GetString()!));
        }
        catch (Exception e) when (e is JsonException or FormatException or KeyNotFoundException or InvalidOperationException or NullReferenceException or ArgumentException)
        {
            error = $"not an audit record ({e.GetType().Name}: {e.Message})";
            return null;
        }
        if (record.PreviousHash.Length != HashBytes || record.Hash.Length != HashBytes)
        {
            error = "hash fields are not 32 bytes";
            return null;
        }
        if (!CryptographicOperations.FixedTimeEquals(record.Hash, HashOf(record.Sequence, record.TimeUnixMs, record.Actor, record.Action, record.Target, record.Outcome, record.PreviousHash)))
        {
            error = "its content does not match its hash (changed after it was written)";
            return null;
        }
        if (!line.SequenceEqual(Encode(record)))
        {
            error = "its bytes are not the canonical encoding of its content (changed after it was written)";
            return null;
        }
        error = "";
        return record;
    }

    private static void Check(string value, int max, string name)
    {
        ArgumentNullException.ThrowIfNull(value, name);
        if (value.Length > max)
        {
            throw new ArgumentException($"audit {name} of {value.Length} characters, above {max}", name);
        }
    }
}
