using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Bft.Hosting.Storage;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Hosting;

/// <summary>
/// The group commit between the core and the links: messages behind a gating record leave only after an
/// fsync covers it; decision records gate nothing and ride on the next sync, or get their own after a delay.
/// </summary>
public sealed class DurabilityStageTests : IDisposable
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-stage-").FullName;
    private readonly List<(int To, long SyncsAtRelease)> _released = [];
    private WriteAheadLog? _wal;

    private static Batch Batch(long seq) => new(1000, [new ClientRequest(4, seq, new byte[16])]);

    private static PreparedCertificate Cert(long cid) =>
        new(cid, 0, Batch(cid).Hash, Batch(cid), [new WriteSignature(0, new byte[64]), new WriteSignature(1, new byte[64]), new WriteSignature(2, new byte[64])]);

    private static List<CoreOutput> Records(params DurableRecord[] records) => [.. records.Select(r => (CoreOutput)new Persist(r))];

    private static List<PendingSend> Sends(int to) => [new PendingSend(to, OutboundPayload.Copy([1, 2, 3]))];

    private DurabilityStage NewStage(TimeSpan lazyDelay)
    {
        _wal = WriteAheadLog.Open(_dir, out _);
        var wal = _wal;
        return new DurabilityStage(wal, sends =>
        {
            lock (_released)
            {
                foreach (var s in sends)
                {
                    _released.Add((s.To, wal.Syncs));
                    s.Payload.Release();
                }
            }
        }, lazyDelay);
    }

    private int ReleasedCount()
    {
        lock (_released)
        {
            return _released.Count;
        }
    }

    private static async Task Until(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + Patience;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, $"timed out waiting for {what}");
            await Task.Delay(5);
        }
    }

    [Fact]
    public void Only_decision_records_gate_nothing()
    {
        Assert.False(new DecisionRecord(1, Batch(1)).GatesLaterSends);
        Assert.True(new PreparedRecord(Cert(1)).GatesLaterSends);
        Assert.True(new RegencyRecord(1).GatesLaterSends);
        Assert.True(new CheckpointRecord(1, Digest.Compute("s"u8), [1]).GatesLaterSends);
    }

    [Fact]
    public async Task Messages_behind_a_gating_record_leave_after_the_fsync()
    {
        await using var stage = NewStage(TimeSpan.FromHours(1));
        await stage.SubmitAsync(Records(new PreparedRecord(Cert(1))), Sends(2), CancellationToken.None);
        await Until(() => ReleasedCount() == 1, "the ACCEPT behind the prepared record");
        Assert.True(_released[0].SyncsAtRelease >= 1, "released before any fsync");
        await Until(() => !stage.Busy, "the stage to go idle");
    }

    [Fact]
    public async Task A_lazy_decision_rides_on_the_next_gating_sync()
    {
        await using var stage = NewStage(TimeSpan.FromHours(1));
        await stage.SubmitLazyAsync(Records(new DecisionRecord(1, Batch(1))), CancellationToken.None);
        Assert.False(stage.Busy);  // lazy work holds nothing back
        await stage.SubmitAsync(Records(new PreparedRecord(Cert(2))), Sends(3), CancellationToken.None);
        await Until(() => ReleasedCount() == 1, "the send behind the prepared record");
        Assert.Equal(1, _wal!.Syncs);  // one fsync for both records
        Assert.Equal(0, stage.LazySyncs);
        Assert.Equal(1, stage.LazyRecords);
    }

    [Fact]
    public async Task A_lazy_decision_alone_is_synced_after_the_delay()
    {
        await using var stage = NewStage(TimeSpan.FromMilliseconds(20));
        await stage.SubmitLazyAsync(Records(new DecisionRecord(1, Batch(1))), CancellationToken.None);
        await Until(() => stage.LazySyncs == 1, "the lazy sync");
        Assert.Equal(1, _wal!.Syncs);
        Assert.Equal(0, ReleasedCount());
    }

    [Fact]
    public async Task A_lazy_decision_reaches_the_file_before_any_sync_so_a_process_crash_keeps_it()
    {
        await using var stage = NewStage(TimeSpan.FromHours(1));
        await stage.SubmitLazyAsync(Records(new DecisionRecord(1, Batch(1))), CancellationToken.None);
        // What another process reads now is what a kill -9 of this one would leave behind.
        List<DurableRecord> onDisk = [];
        await Until(() =>
        {
            using var read = new FileStream(Directory.GetFiles(_dir, "wal-*.log").Single(), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            var bytes = new byte[read.Length];
            read.ReadExactly(bytes);
            onDisk = WriteAheadLog.ReadSegment(bytes, out _);
            return onDisk.Count == 1;
        }, "the decision in the file");
        Assert.Equal(1L, Assert.IsType<DecisionRecord>(onDisk[0]).ConsensusId);
        Assert.Equal(0, _wal!.Syncs);
    }

    [Fact]
    public async Task Records_survive_a_reopen_whichever_way_they_were_synced()
    {
        var stage = NewStage(TimeSpan.FromMilliseconds(20));
        await stage.SubmitLazyAsync(Records(new DecisionRecord(1, Batch(1))), CancellationToken.None);
        await Until(() => stage.LazySyncs == 1, "the lazy sync");
        await stage.SubmitAsync(Records(new PreparedRecord(Cert(2))), Sends(1), CancellationToken.None);
        await stage.SubmitLazyAsync(Records(new DecisionRecord(2, Batch(2))), CancellationToken.None);
        await stage.DisposeAsync();
        _wal!.Dispose();
        using var again = WriteAheadLog.Open(_dir, out var recovered);
        Assert.Equal(["decision 1", "prepared 2", "decision 2"], recovered.Select(r => r switch
        {
            DecisionRecord d => $"decision {d.ConsensusId}",
            PreparedRecord p => $"prepared {p.Certificate.ConsensusId}",
            _ => r.GetType().Name,
        }));
        _wal = null;
    }

    public void Dispose()
    {
        _wal?.Dispose();
        Directory.Delete(_dir, recursive: true);
    }
}
