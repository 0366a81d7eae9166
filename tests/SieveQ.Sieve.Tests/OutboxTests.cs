using SieveQ.Sieve.Hosting.Storage;
using SieveQ.Sieve.Sender.Outbox;

namespace SieveQ.Sieve.Tests;

/// <summary>The outbox record format, its index, and the file that keeps accepted messages across crashes.</summary>
public sealed class OutboxTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-outbox-" + Guid.NewGuid().ToString("N"));

    public OutboxTests() => Directory.CreateDirectory(_dir);

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static byte[] Data(long seq) => System.Text.Encoding.UTF8.GetBytes($"message {seq} " + new string('x', (int)(seq % 50)));

    private static byte[] FileOf(params byte[][] records) => [.. OutboxRecordCodec.Header, .. records.SelectMany(r => r)];

    private static byte[][] Messages(int from, int count) =>
        Enumerable.Range(from, count).Select(s => OutboxRecordCodec.EncodeMessage(s, 100 + s % 3, Data(s))).ToArray();

    [Fact]
    public void Records_round_trip_and_acknowledgements_drop_what_they_cover()
    {
        var records = Messages(1, 5).Append(OutboxRecordCodec.EncodeAcknowledged(3)).Concat(Messages(6, 2)).ToArray();
        var scan = OutboxRecordCodec.Scan(FileOf(records));
        Assert.False(scan.TornTail);
        Assert.Equal(FileOf(records).Length, scan.ValidLength);
        var index = OutboxIndex.FromScan(scan);
        Assert.Equal([4L, 5, 6, 7], index.Pending.Select(e => e.Seq));
        Assert.Equal(3, index.AcknowledgedUpTo);
        var five = scan.Records.Single(r => r.Kind == OutboxRecordKind.Message && r.Seq == 5);
        Assert.Equal(Data(5), five.Data.ToArray());
        Assert.Equal(100 + 5 % 3, five.Receiver);
        Assert.Equal(index.Pending.Sum(e => (long)e.Length), index.PendingBytes);
    }

    [Fact]
    public void A_torn_last_record_is_cut_at_every_length_and_nothing_before_it_is_lost()
    {
        var whole = Messages(1, 3);
        var last = OutboxRecordCodec.EncodeMessage(4, 100, Data(4));
        for (var keep = 0; keep < last.Length; keep++)
        {
            var scan = OutboxRecordCodec.Scan(FileOf([.. whole, last[..keep]]));
            Assert.Equal(keep > 0, scan.TornTail);
            Assert.Equal([1L, 2, 3], scan.Records.Select(r => r.Seq));
            Assert.Equal(FileOf(whole).Length, scan.ValidLength);
        }
    }

    [Fact]
    public void A_last_record_whose_bytes_did_not_all_reach_the_disk_or_trailing_zeros_are_a_torn_tail()
    {
        var whole = Messages(1, 3);
        var last = OutboxRecordCodec.EncodeMessage(4, 100, Data(4));
        last[^3] ^= 0x40;
        var scan = OutboxRecordCodec.Scan(FileOf([.. whole, last]));
        Assert.True(scan.TornTail);
        Assert.Equal(3, scan.Records.Count);

        scan = OutboxRecordCodec.Scan(FileOf([.. whole, new byte[4096]]));
        Assert.True(scan.TornTail);
        Assert.Equal(3, scan.Records.Count);
    }

    [Fact]
    public void A_damaged_record_with_whole_records_after_it_is_refused_not_cut()
    {
        var records = Messages(1, 4);
        records[1][^1] ^= 1;
        var e = Assert.Throws<OutboxCorruptException>(() => OutboxRecordCodec.Scan(FileOf(records)));
        Assert.Contains("CRC-32C", e.Message, StringComparison.Ordinal);

        var garbage = Messages(1, 2).Append([0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5, 6, 7, 8, 9]).ToArray();
        Assert.Throws<OutboxCorruptException>(() => OutboxRecordCodec.Scan(FileOf(garbage)));
        Assert.Throws<OutboxCorruptException>(() => OutboxRecordCodec.Scan("SQCUR1\0\0"u8.ToArray()));
    }

    [Fact]
    public void Message_numbers_must_increase()
    {
        var scan = OutboxRecordCodec.Scan(FileOf([.. Messages(5, 1), .. Messages(5, 1)]));
        Assert.Throws<OutboxCorruptException>(() => OutboxIndex.FromScan(scan));
    }

    [Fact]
    public void The_bound_counts_pending_messages_and_bytes()
    {
        var index = new OutboxIndex();
        Assert.True(index.HasRoomFor(1 << 20, maxBytes: 10, maxEntries: 1));
        index.Add(new OutboxEntry(1, 100, OutboxRecordCodec.HeaderBytes, OutboxRecordCodec.MessageRecordBytes(100)));
        Assert.False(index.HasRoomFor(0, maxBytes: 1 << 20, maxEntries: 1));
        Assert.False(index.HasRoomFor(100, maxBytes: 2 * OutboxRecordCodec.MessageRecordBytes(100) - 1, maxEntries: 10));
        Assert.True(index.HasRoomFor(100, maxBytes: 2 * OutboxRecordCodec.MessageRecordBytes(100), maxEntries: 10));
        index.AcknowledgeUpTo(1, 17);
        Assert.Equal(0, index.PendingBytes);
    }

    [Fact]
    public void A_file_reopened_after_a_crash_gives_back_what_was_committed_and_cuts_the_torn_tail()
    {
        var path = Path.Combine(_dir, "sender-1.outbox");
        using (var outbox = OutboxFile.Open(path))
        {
            for (var s = 1; s <= 10; s++)
            {
                outbox.Append(s, 100, Data(s));
            }
            outbox.Commit();
            outbox.AcknowledgeUpTo(4);
        }
        var whole = new FileInfo(path).Length;
        // A crash in the middle of the next append.
        var torn = OutboxRecordCodec.EncodeMessage(11, 100, Data(11));
        using (var f = new FileStream(path, FileMode.Append))
        {
            f.Write(torn, 0, torn.Length / 2);
        }
        using (var outbox = OutboxFile.Open(path))
        {
            Assert.True(outbox.TornTailCut);
            Assert.Equal(Enumerable.Range(5, 6).Select(s => (long)s), outbox.Recovered.Select(m => m.Seq));
            Assert.Equal(Data(7), outbox.Recovered[2].Data);
            Assert.Equal(whole, new FileInfo(path).Length);
            outbox.Append(11, 100, Data(11));
            outbox.Commit();
        }
        using (var outbox = OutboxFile.Open(path))
        {
            Assert.False(outbox.TornTailCut);
            Assert.Equal(Enumerable.Range(5, 7).Select(s => (long)s), outbox.Recovered.Select(m => m.Seq));
        }
    }

    [Fact]
    public void A_damaged_file_is_refused_and_left_as_it_is()
    {
        var path = Path.Combine(_dir, "sender-1.outbox");
        using (var outbox = OutboxFile.Open(path))
        {
            for (var s = 1; s <= 3; s++)
            {
                outbox.Append(s, 100, Data(s));
            }
            outbox.Commit();
        }
        var bytes = File.ReadAllBytes(path);
        bytes[OutboxRecordCodec.HeaderBytes + 12] ^= 0x10;
        File.WriteAllBytes(path, bytes);
        var e = Assert.Throws<OutboxCorruptException>(() => OutboxFile.Open(path));
        Assert.Contains(path, e.Message, StringComparison.Ordinal);
        Assert.Equal(bytes, File.ReadAllBytes(path));
    }

    [Fact]
    public void Compaction_keeps_only_the_pending_messages_and_survives_reopening()
    {
        var path = Path.Combine(_dir, "sender-1.outbox");
        var big = new byte[64 * 1024];
        using (var outbox = OutboxFile.Open(path))
        {
            for (var s = 1; s <= 100; s++)
            {
                big[0] = (byte)s;
                outbox.Append(s, 100, big);
            }
            outbox.Commit();
            outbox.AcknowledgeUpTo(90);
            Assert.Equal(1, outbox.Compactions);
            Assert.False(File.Exists(path + ".compact"));
            Assert.True(new FileInfo(path).Length < 11 * OutboxRecordCodec.MessageRecordBytes(big.Length));
            // Appends after a compaction land in the new file.
            big[0] = 101;
            outbox.Append(101, 100, big);
            outbox.Commit();
        }
        using (var reopened = OutboxFile.Open(path))
        {
            Assert.Equal(Enumerable.Range(91, 11).Select(s => (long)s), reopened.Recovered.Select(m => m.Seq));
            Assert.All(reopened.Recovered, m => Assert.Equal((byte)m.Seq, m.Data[0]));
            Assert.Equal(90, reopened.Index.AcknowledgedUpTo);
        }
    }

    [Fact]
    public void A_second_opener_of_the_same_outbox_is_refused()
    {
        var path = Path.Combine(_dir, "sender-1.outbox");
        using var first = OutboxFile.Open(path);
        Assert.ThrowsAny<IOException>(() => OutboxFile.Open(path));
    }
}
