using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Hosting.Storage;
using SieveQ.Sieve.Receiver;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sieve.Tests;

public sealed class PrimitiveTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-prim-" + Guid.NewGuid().ToString("N"));

    public PrimitiveTests() => Directory.CreateDirectory(_dir);

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void Window_rejects_replays_too_old_and_too_far_ahead()
    {
        var w = new SequenceWindow(64, 100, adoptFirst: false);
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(1));
        Assert.Equal(SequenceCheck.Replay, w.TryMark(1));
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(3));
        Assert.Equal(1, w.ContiguousUpTo);
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(2));
        Assert.Equal(3, w.ContiguousUpTo);
        Assert.Equal(SequenceCheck.TooFarAhead, w.TryMark(104));
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(103));
        Assert.Equal(SequenceCheck.TooOld, w.TryMark(4));
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(50));
        Assert.Equal(SequenceCheck.Replay, w.TryMark(50));
        Assert.Equal(SequenceCheck.TooOld, w.TryMark(0));
    }

    [Fact]
    public void Window_undo_restores_exactly_including_a_window_move()
    {
        var w = new SequenceWindow(64, 1000, adoptFirst: false);
        for (var s = 1; s <= 40; s += 2)
        {
            w.TryMark(s);
        }
        var before = Snapshot(w);
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(500));
        w.UndoLastMark();
        Assert.Equal(before, Snapshot(w));
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(2));
        w.UndoLastMark();
        Assert.Equal(before, Snapshot(w));
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(2));
    }

    [Fact]
    public void Window_adopting_first_number_accepts_lower_unseen_numbers()
    {
        var w = new SequenceWindow(64, 100, adoptFirst: true);
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(5000));
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(4990));
        Assert.Equal(SequenceCheck.Replay, w.TryMark(4990));
        Assert.Equal(SequenceCheck.TooOld, w.TryMark(4000));
    }

    [Fact]
    public void Window_abandon_settles_skipped_numbers()
    {
        var w = new SequenceWindow(64, 5000, adoptFirst: false);
        w.TryMark(1);
        w.TryMark(2);
        w.Abandon(1026);
        Assert.Equal(1025, w.ContiguousUpTo);
        Assert.Equal(SequenceCheck.TooOld, w.TryMark(500));
        Assert.Equal(SequenceCheck.Replay, w.TryMark(1000));
        Assert.Equal(SequenceCheck.Accepted, w.TryMark(1026));
        Assert.Equal(1026, w.ContiguousUpTo);
    }

    [Fact]
    public void Grant_is_exhausted_and_refilled_by_time()
    {
        var g = new GrantBucket(ratePerSecond: 10, burst: 3, nowMs: 0);
        Assert.True(g.TryTake(0));
        Assert.True(g.TryTake(0));
        Assert.True(g.TryTake(0));
        Assert.False(g.TryTake(0));
        Assert.False(g.TryTake(99));
        Assert.True(g.TryTake(100));
        Assert.False(g.TryTake(100));
        Assert.Equal(3, g.Available(10_000));
        // A clock that runs backwards refills nothing.
        g.TryTake(10_000);
        Assert.Equal(2, g.Available(5_000));
        g.Throttle();
        Assert.Equal(500, g.ScalePermille);
        g.Relax();
        Assert.Equal(625, g.ScalePermille);
    }

    [Fact]
    public void Suspicion_quarantines_at_threshold_and_decays_back()
    {
        var policy = new SuspicionPolicy(QuarantineAt: 10, ReleaseBelow: 5, DecayPerSecond: 1);
        var c = new SuspicionCounter();
        Assert.False(c.Add(0, 6, policy));
        Assert.True(c.Add(0, 6, policy));
        Assert.True(c.IsQuarantined(1000, policy));
        Assert.True(c.IsQuarantined(7000, policy));
        Assert.False(c.IsQuarantined(8000, policy));
        Assert.Equal(0, c.Value(100_000, policy));
    }

    /// <summary>The sieve's read model peeks at suspicion after every execution: that must not move the decay time the snapshot carries.</summary>
    [Fact]
    public void Peeking_at_suspicion_gives_what_reading_it_would_and_changes_no_snapshot_byte()
    {
        var policy = new SuspicionPolicy(QuarantineAt: 10, ReleaseBelow: 5, DecayPerSecond: 1);
        var peeked = new SuspicionCounter();
        peeked.Add(0, 12, policy);
        var before = Bytes(peeked);
        foreach (var t in new long[] { 0, 1_000, 6_999, 7_000, 7_001, 12_000, 100_000 })
        {
            var read = new SuspicionCounter();
            read.Add(0, 12, policy);
            Assert.Equal((read.Value(t, policy), read.IsQuarantined(t, policy)), peeked.Peek(t, policy));
            Assert.Equal(before, Bytes(peeked));
        }

        static byte[] Bytes(SuspicionCounter c)
        {
            using var w = new CanonicalWriter();
            c.WriteTo(w);
            return w.ToArray();
        }
    }

    [Fact]
    public void Sequence_numbers_never_repeat_across_crashes()
    {
        var path = Path.Combine(_dir, "seq");
        var seen = new HashSet<long>();
        for (var run = 0; run < 5; run++)
        {
            // Each "run" is a process that crashes without any shutdown step.
            var store = new FileSequenceStore(path);
            var s = new SenderSequencer(store, blockSize: 16);
            for (var i = 0; i < 10 + run * 7; i++)
            {
                Assert.True(seen.Add(s.Next()));
            }
            store.Dispose();
        }
        Assert.True(seen.Max() > seen.Count);
    }

    /// <summary>Before, every restart skipped the rest of the reserved block (about 1,025 numbers with the default block).</summary>
    [Fact]
    public void An_orderly_stop_gives_back_the_rest_of_the_block_so_a_restart_skips_one_number()
    {
        var path = Path.Combine(_dir, "seq-orderly");
        long last = 0;
        for (var run = 0; run < 3; run++)
        {
            using var store = new FileSequenceStore(path);
            var s = new SenderSequencer(store);
            var first = s.Next();
            Assert.Equal(run == 0 ? 1 : last + 2, first);
            for (var i = 0; i < 9; i++)
            {
                last = s.Next();
            }
            s.ReleaseUnused();
        }
        Assert.Equal(1 + 2 * 11 + 9, last);  // three runs of 10 numbers, two single-number gaps
        // Either torn write of the lowering keeps a mark at or above the last used number.
        var bytes = File.ReadAllBytes(path);
        foreach (var torn in new[] { 4, 20 })
        {
            var copy = (byte[])bytes.Clone();
            copy[torn] ^= 0xff;
            File.WriteAllBytes(path, copy);
            using var store = new FileSequenceStore(path);
            Assert.True(store.LoadReserved() >= last);
        }
    }

    [Fact]
    public void Sequence_store_survives_a_torn_slot()
    {
        var path = Path.Combine(_dir, "seq2");
        using (var store = new FileSequenceStore(path))
        {
            store.LoadReserved();
            store.SaveReserved(100);
            store.SaveReserved(200);
        }
        var bytes = File.ReadAllBytes(path);
        bytes[20] ^= 0xff; // the slot holding 200 is torn
        File.WriteAllBytes(path, bytes);
        using (var store = new FileSequenceStore(path))
        {
            Assert.Equal(100, store.LoadReserved());
        }
    }

    [Fact]
    public void Cursor_store_round_trips_and_refuses_a_corrupt_file()
    {
        var path = Path.Combine(_dir, "cur");
        var store = new FileDeliveryCursorStore(path);
        Assert.Empty(store.Load());
        store.Save([new(1, 10), new(2, 20)]);
        Assert.Equal([new DeliveredCursor(1, 10), new DeliveredCursor(2, 20)], store.Load());
        var b = File.ReadAllBytes(path);
        b[8] ^= 1;
        File.WriteAllBytes(path, b);
        Assert.Throws<MalformedEnvelopeException>(() => store.Load());
    }

    [Fact]
    public void Drop_counters_feed_the_meter()
    {
        long seen = 0;
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (inst, l) =>
        {
            if (inst.Meter.Name == SieveMetrics.MeterName && inst.Name == "sieveq.drops")
            {
                l.EnableMeasurementEvents(inst);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, v, tags, _) =>
        {
            foreach (var t in tags)
            {
                if (t.Key == "component" && (string?)t.Value == "test-component")
                {
                    Interlocked.Add(ref seen, v);
                }
            }
        });
        listener.Start();
        var c = new DropCounters("test-component");
        c.Count(SieveStage.Mac, DropReason.BadMac, 3);
        Assert.Equal(3, c[SieveStage.Mac, DropReason.BadMac]);
        Assert.Equal(3, Interlocked.Read(ref seen));
    }

    private static string Snapshot(SequenceWindow w)
    {
        using var cw = new CanonicalWriter();
        w.WriteTo(cw);
        return Convert.ToHexString(cw.WrittenSpan);
    }
}
