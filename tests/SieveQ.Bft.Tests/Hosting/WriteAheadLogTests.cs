using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Storage;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Hosting;

public sealed class WriteAheadLogTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-wal-").FullName;

    private static Batch Batch(int n, long ts = 1000) => new(ts, [.. Enumerable.Range(0, n).Select(i => new ClientRequest(4, i + 1, new byte[i * 10]))]);

    private static PreparedCertificate Cert(long cid) =>
        new(cid, 1, Batch(2).Hash, Batch(2), [new WriteSignature(0, new byte[64]), new WriteSignature(1, new byte[64]), new WriteSignature(2, new byte[64])]);

    private static string Describe(DurableRecord r) => r switch
    {
        DecisionRecord d => $"decision {d.ConsensusId} {d.Value.Hash}",
        PreparedRecord p => $"prepared {p.Certificate.ConsensusId} {p.Certificate.BatchHash} {p.Certificate.Value?.Hash} {p.Certificate.Writes.Count}",
        CheckpointRecord c => $"checkpoint {c.ConsensusId} {c.StateHash} {Convert.ToHexString(c.State)}",
        RegencyRecord g => $"regency {g.Regency}",
        _ => r.ToString()!,
    };

    [Fact]
    public void RecordsSurviveReopenInOrder()
    {
        DurableRecord[] written = [new RegencyRecord(2), new PreparedRecord(Cert(1)), new DecisionRecord(1, Batch(3)), new CheckpointRecord(1, Digest.Compute("s"u8), [1, 2, 3])];
        using (var wal = WriteAheadLog.Open(_dir, out var none))
        {
            Assert.Empty(none);
            foreach (var r in written)
            {
                wal.Append(r);
            }
            wal.Sync();
        }
        using var again = WriteAheadLog.Open(_dir, out var recovered);
        Assert.Equal(written.Select(Describe), recovered.Select(Describe));
    }

    [Fact]
    public void TornTailIsCutAndLaterAppendsAreReadable()
    {
        using (var wal = WriteAheadLog.Open(_dir, out _))
        {
            wal.Append(new DecisionRecord(1, Batch(2)));
            wal.Append(new DecisionRecord(2, Batch(5)));
            wal.Sync();
        }
        var segment = Directory.GetFiles(_dir, "wal-*.log").Single();
        var length = new FileInfo(segment).Length;
        using (var fs = new FileStream(segment, FileMode.Open))
        {
            fs.SetLength(length - 7);  // the crash tore the second record
            fs.Seek(0, SeekOrigin.End);
            fs.Write([0xde, 0xad, 0xbe, 0xef]);
        }
        using (var wal = WriteAheadLog.Open(_dir, out var recovered))
        {
            Assert.Equal(["decision 1"], recovered.Select(r => Describe(r)[..10]));
            wal.Append(new DecisionRecord(2, Batch(1)));
            wal.Sync();
        }
        using var last = WriteAheadLog.Open(_dir, out var all);
        Assert.Equal([1L, 2L], all.Cast<DecisionRecord>().Select(d => d.ConsensusId));
    }

    [Fact]
    public void CorruptRecordInTheMiddleEndsRecoveryThere()
    {
        using (var wal = WriteAheadLog.Open(_dir, out _))
        {
            wal.Append(new RegencyRecord(1));
            wal.Append(new DecisionRecord(1, Batch(2)));
            wal.Append(new DecisionRecord(2, Batch(2)));
            wal.Sync();
        }
        var segment = Directory.GetFiles(_dir, "wal-*.log").Single();
        var bytes = File.ReadAllBytes(segment);
        bytes[8 + 5 + 20] ^= 0xff;  // inside the second record's body: its CRC no longer matches
        File.WriteAllBytes(segment, bytes);
        using var again = WriteAheadLog.Open(_dir, out var recovered);
        Assert.Equal(["regency 1"], recovered.Select(Describe));
    }

    [Fact]
    public void TruncationKeepsOnlyWhatRecoveryNeeds()
    {
        using (var wal = WriteAheadLog.Open(_dir, out _))
        {
            wal.Append(new RegencyRecord(1));
            for (var cid = 1; cid <= 5; cid++)
            {
                wal.Append(new PreparedRecord(Cert(cid)));
                wal.Append(new DecisionRecord(cid, Batch(1, 1000 + cid)));
            }
            wal.Append(new RegencyRecord(3));
            wal.Append(new CheckpointRecord(4, Digest.Compute("four"u8), [4]));
            wal.Truncate(4);
            wal.Append(new DecisionRecord(6, Batch(1, 1006)));
            wal.Sync();
            Assert.Equal(1, wal.Generation);
        }
        Assert.Single(Directory.GetFiles(_dir, "wal-*.log"));
        using var again = WriteAheadLog.Open(_dir, out var recovered);
        Assert.Equal(["regency 3", "checkpoint 4", "prepared 5", "decision 5", "decision 6"], recovered.Select(r => string.Join(' ', Describe(r).Split(' ').Take(2))));
    }

    /// <summary>The checkpoint before the newest survives compaction and a reopen: a restarted replica vouches for it.</summary>
    [Fact]
    public void Truncation_keeps_the_checkpoint_before_the_newest_and_drops_older_ones()
    {
        using (var wal = WriteAheadLog.Open(_dir, out _))
        {
            wal.Append(new CheckpointRecord(4, Digest.Compute("four"u8), [4]));
            wal.Truncate(0);
            wal.Append(new CheckpointRecord(8, Digest.Compute("eight"u8), [8]));
            wal.Truncate(4);
            wal.Append(new CheckpointRecord(12, Digest.Compute("twelve"u8), [12]));
            wal.Truncate(8);
            wal.Sync();
        }
        using var again = WriteAheadLog.Open(_dir, out var recovered);
        Assert.Equal(["checkpoint 8", "checkpoint 12"], recovered.Select(r => string.Join(' ', Describe(r).Split(' ').Take(2))));
    }

    private static PreparedCertificate CertFor(long cid, Batch value) =>
        new(cid, 1, value.Hash, value, [new WriteSignature(0, new byte[64]), new WriteSignature(1, new byte[64]), new WriteSignature(2, new byte[64])]);

    private long SegmentLength() => new FileInfo(Directory.GetFiles(_dir, "wal-*.log").Single()).Length;

    [Fact]
    public void A_prepared_then_decided_batch_is_written_once()
    {
        var batch = Batch(20);
        var prepared = new PreparedRecord(CertFor(7, batch));
        using (var wal = WriteAheadLog.Open(_dir, out _))
        {
            wal.Append(prepared);
            wal.Append(new DecisionRecord(7, batch));
            wal.Sync();
        }
        Assert.Equal(WalRecordCodec.Encode(prepared).Length + WalRecordCodec.Encode(new DecisionReference(7, batch.Hash)).Length, SegmentLength());
        using var again = WriteAheadLog.Open(_dir, out var recovered);
        var decision = Assert.IsType<DecisionRecord>(recovered[1]);
        Assert.Equal(7, decision.ConsensusId);
        Assert.Equal(batch.Hash, decision.Value.Hash);
        Assert.Equal(batch.Requests.Select(r => Convert.ToHexString(r.Payload)), decision.Value.Requests.Select(r => Convert.ToHexString(r.Payload)));
    }

    [Fact]
    public void A_decision_on_another_batch_than_the_prepared_one_is_written_whole()
    {
        var decided = Batch(3, ts: 2000);
        using (var wal = WriteAheadLog.Open(_dir, out _))
        {
            wal.Append(new PreparedRecord(CertFor(7, Batch(3))));  // prepared in an older regency, another value won
            wal.Append(new DecisionRecord(7, decided));
            wal.Append(new DecisionRecord(8, Batch(1)));  // decided without a prepared record here
            wal.Sync();
        }
        using var again = WriteAheadLog.Open(_dir, out var recovered);
        Assert.Equal(["prepared 7", "decision 7 " + decided.Hash, "decision 8 " + Batch(1).Hash],
            recovered.Select(r => Describe(r) is var d && r is PreparedRecord ? string.Join(' ', d.Split(' ').Take(2)) : d));
    }

    [Fact]
    public void References_survive_a_roll_and_resolve_against_carried_prepared_records()
    {
        using (var wal = WriteAheadLog.Open(_dir, out _))
        {
            for (var cid = 1; cid <= 4; cid++)
            {
                wal.Append(new PreparedRecord(CertFor(cid, Batch(2, 1000 + cid))));
                wal.Append(new DecisionRecord(cid, Batch(2, 1000 + cid)));
            }
            wal.Append(new PreparedRecord(CertFor(5, Batch(2, 1005))));
            wal.Append(new CheckpointRecord(2, Digest.Compute("two"u8), [2]));
            wal.Truncate(2);
            wal.Append(new DecisionRecord(5, Batch(2, 1005)));  // its prepared record was carried into the new segment
            wal.Sync();
        }
        using (var wal = WriteAheadLog.Open(_dir, out var recovered))
        {
            Assert.Equal(["checkpoint 2", "prepared 3", "decision 3", "prepared 4", "decision 4", "prepared 5", "decision 5"],
                recovered.Select(r => string.Join(' ', Describe(r).Split(' ').Take(2))));
            Assert.All(recovered.OfType<DecisionRecord>(), d => Assert.Equal(Batch(2, 1000 + d.ConsensusId).Hash, d.Value.Hash));
            var before = SegmentLength();
            wal.Append(new DecisionRecord(5, Batch(2, 1005)));  // appended after a reopen: still a reference
            wal.Sync();
            Assert.Equal(WalRecordCodec.Encode(new DecisionReference(5, Batch(2, 1005).Hash)).Length, SegmentLength() - before);
        }
    }

    [Fact]
    public void A_reference_without_its_prepared_record_is_skipped_and_reading_goes_on()
    {
        var segment = Path.Combine(_dir, "wal-000000000000.log");
        File.WriteAllBytes(segment, [
            .. WalRecordCodec.Encode(new RegencyRecord(2)),
            .. WalRecordCodec.Encode(new DecisionReference(9, Batch(1).Hash)),
            .. WalRecordCodec.Encode(new DecisionRecord(10, Batch(2))),
        ]);
        using var wal = WriteAheadLog.Open(_dir, out var recovered);
        Assert.Equal(["regency 2", "decision 10 " + Batch(2).Hash], recovered.Select(Describe));
    }

    /// <summary>
    /// Issue 16, item 2: a checkpoint above what recovery reads was written, read back as a torn tail, and the
    /// log cut there, losing it and everything after it. It is refused now; the log keeps every record before and after.
    /// </summary>
    [Fact]
    public void A_record_recovery_could_not_read_is_refused_and_nothing_valid_is_lost()
    {
        using (var wal = WriteAheadLog.Open(_dir, out _))
        {
            wal.Append(new RegencyRecord(3));
            var huge = new CheckpointRecord(9, Digest.Compute("big"u8), new byte[WalRecordCodec.MaxRecordBytes]);
            var e = Assert.Throws<WalRecordTooLargeException>(() => wal.Append(huge));
            Assert.Contains($"above the {WalRecordCodec.MaxRecordBytes} bytes recovery reads", e.Message, StringComparison.Ordinal);
            wal.Append(new DecisionRecord(1, Batch(2)));
            wal.Sync();
        }
        using var again = WriteAheadLog.Open(_dir, out var recovered);
        Assert.Equal(["regency 3", $"decision 1 {Batch(2).Hash}"], recovered.Select(Describe));
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
