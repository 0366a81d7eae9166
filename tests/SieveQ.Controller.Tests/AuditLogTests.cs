using System.Text;
using SieveQ.Controller.Audit;

namespace SieveQ.Controller.Tests;

public sealed class AuditLogTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-audit-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    private async Task WriteAsync(int count, AuditLogOptions? options = null)
    {
        await using var log = AuditLog.Open(_dir, options);
        for (var i = 0; i < count; i++)
        {
            await log.AppendAsync($"key ab12 (operator)", "quarantine-sender", $"sender {i}", "recorded");
        }
    }

    [Fact]
    public async Task Records_chain_and_survive_reopening()
    {
        await WriteAsync(5);
        await using var log = AuditLog.Open(_dir);
        Assert.Equal(5, log.LastSequence);
        var tail = log.Tail(10);
        Assert.Equal([1L, 2, 3, 4, 5], tail.Select(r => r.Sequence));
        Assert.Equal(AuditRecordCodec.GenesisHash, tail[0].PreviousHash);
        for (var i = 1; i < tail.Count; i++)
        {
            Assert.Equal(tail[i - 1].Hash, tail[i].PreviousHash);
        }
        var next = await log.AppendAsync("admin", "readmit-sender", "sender 1", "recorded");
        Assert.Equal(6, next.Sequence);
        Assert.Equal(tail[^1].Hash, next.PreviousHash);
    }

    [Fact]
    public async Task A_changed_byte_names_the_record()
    {
        await WriteAsync(5);
        var path = AuditLog.FilePath(_dir, 1);
        var lines = File.ReadAllLines(path);
        // Record 3's target "sender 2" becomes "sender 7": one byte.
        lines[2] = lines[2].Replace("\"sender 2\"", "\"sender 7\"", StringComparison.Ordinal);
        File.WriteAllText(path, string.Join('\n', lines) + "\n");
        var e = Assert.Throws<AuditLogBrokenException>(() => AuditLog.Open(_dir));
        Assert.Equal(3, e.RecordSequence);
        Assert.Contains("line 3", e.Message, StringComparison.Ordinal);
        Assert.Contains("record 3", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Every_single_byte_change_is_refused()
    {
        await WriteAsync(3);
        var path = AuditLog.FilePath(_dir, 1);
        var original = File.ReadAllBytes(path);
        // Every byte of the middle record, except its newline (changing that joins two lines: also refused, as a different record).
        var start = Array.IndexOf(original, (byte)'\n') + 1;
        var end = Array.IndexOf(original, (byte)'\n', start);
        for (var i = start; i < end; i++)
        {
            var changed = (byte[])original.Clone();
            changed[i] ^= 0x01;
            File.WriteAllBytes(path, changed);
            var e = Assert.Throws<AuditLogBrokenException>(() => AuditLog.Open(_dir));
            Assert.Equal(2, e.RecordSequence);
        }
    }

    [Fact]
    public async Task A_removed_record_is_refused()
    {
        await WriteAsync(4);
        var path = AuditLog.FilePath(_dir, 1);
        var lines = File.ReadAllLines(path).ToList();
        lines.RemoveAt(1);
        File.WriteAllText(path, string.Join('\n', lines) + "\n");
        var e = Assert.Throws<AuditLogBrokenException>(() => AuditLog.Open(_dir));
        Assert.Equal(2, e.RecordSequence);
        Assert.Contains("sequence 3 where 2 must follow", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_torn_tail_is_cut_and_the_chain_goes_on()
    {
        await WriteAsync(3);
        var path = AuditLog.FilePath(_dir, 1);
        var intact = new FileInfo(path).Length;
        // A crash in the middle of the fourth append.
        File.AppendAllText(path, "{\"seq\":4,\"time\":\"2026-01-01T00:00:00.000Z\",\"actor\":\"x");
        await using (var log = AuditLog.Open(_dir))
        {
            Assert.Equal(3, log.LastSequence);
            Assert.True(log.TornBytesCut > 0);
            Assert.Equal(intact, new FileInfo(path).Length);
            Assert.Equal(4, (await log.AppendAsync("admin", "status", "-", "ok")).Sequence);
        }
        await using var again = AuditLog.Open(_dir);
        Assert.Equal(4, again.LastSequence);
        Assert.Equal(0, again.TornBytesCut);
    }

    [Fact]
    public async Task A_whole_last_record_without_its_newline_is_kept()
    {
        await WriteAsync(3);
        var path = AuditLog.FilePath(_dir, 1);
        var bytes = File.ReadAllBytes(path);
        File.WriteAllBytes(path, bytes[..^1]);
        await using var log = AuditLog.Open(_dir);
        Assert.Equal(3, log.LastSequence);
        Assert.Equal(0, log.TornBytesCut);
        Assert.Equal(bytes, File.ReadAllBytes(path));
    }

    [Fact]
    public async Task Rotation_keeps_the_chain_across_files()
    {
        var options = new AuditLogOptions { MaxFileBytes = AuditRecordCodec.MaxLineBytes + 1 };
        var perRecord = AuditRecordCodec.Encode(AuditRecordCodec.Create(1, 0, "key ab12 (operator)", "quarantine-sender", "sender 0", "recorded", AuditRecordCodec.GenesisHash)).Length + 1;
        var count = (int)(3 * options.MaxFileBytes / perRecord) + 2;
        await WriteAsync(count, options);
        var files = Directory.GetFiles(_dir, "audit-*.log").Order(StringComparer.Ordinal).ToList();
        Assert.True(files.Count >= 3, $"{files.Count} files");
        Assert.All(files, f => Assert.True(new FileInfo(f).Length <= options.MaxFileBytes));
        // The second file's first record continues from the first file's last.
        var lastOfFirst = AuditRecordCodec.TryDecode(Encoding.UTF8.GetBytes(File.ReadAllLines(files[0])[^1]), out _)!;
        var firstOfSecond = AuditRecordCodec.TryDecode(Encoding.UTF8.GetBytes(File.ReadAllLines(files[1])[0]), out _)!;
        Assert.Equal(lastOfFirst.Sequence + 1, firstOfSecond.Sequence);
        Assert.Equal(lastOfFirst.Hash, firstOfSecond.PreviousHash);
        await using (var log = AuditLog.Open(_dir, options))
        {
            Assert.Equal(count, log.LastSequence);
        }
        // A whole middle file removed: refused, and the gap named.
        File.Delete(files[1]);
        var e = Assert.Throws<AuditLogBrokenException>(() => AuditLog.Open(_dir, options));
        Assert.Contains("missing", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Over_long_fields_are_refused_not_cut()
    {
        Assert.Throws<ArgumentException>(() =>
            AuditRecordCodec.Create(1, 0, new string('a', AuditRecordCodec.MaxActorChars + 1), "x", "y", "z", AuditRecordCodec.GenesisHash));
    }
}
