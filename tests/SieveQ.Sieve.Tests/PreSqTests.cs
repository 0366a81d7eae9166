using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.PreSq;

namespace SieveQ.Sieve.Tests;

public sealed class PreSqTests : IClassFixture<TestWorld>
{
    private readonly TestWorld _w;

    public PreSqTests(TestWorld w) => _w = w;

    private PreSqFilter Filter(PreSqOptions? o = null, SenderWhitelist? wl = null) =>
        new(10, o ?? new PreSqOptions(), wl ?? new SenderWhitelist([1, 2]), s => TestWorld.SenderIds.Contains(s) ? _w.SenderPreSqRing(s, 10) : null);

    [Fact]
    public void Good_frame_passes_and_body_is_the_message_as_received()
    {
        var f = Filter();
        var msg = _w.Message(1, 1, 100, "hi");
        var v = f.Inspect(_w.Frame(1, 10, msg), 0);
        Assert.True(v.Passed);
        Assert.Equal(msg, v.Body.ToArray());
        Assert.Equal(StructureKind.SenderMessage, v.Kind);
    }

    [Fact]
    public void A_not_whitelisted_or_quarantined_sender_is_dropped_at_a()
    {
        var wl = new SenderWhitelist([1, 2]);
        var f = Filter(wl: wl);
        var v = f.Inspect(_w.Frame(3, 10, _w.Message(3, 1, 100, "x")), 0);
        Assert.Equal((false, SieveStage.Whitelist, DropReason.NotWhitelisted), (v.Passed, v.Stage, v.Reason));
        wl.Quarantine(2);
        v = f.Inspect(_w.Frame(2, 10, _w.Message(2, 1, 100, "x")), 0);
        Assert.Equal((SieveStage.Whitelist, DropReason.Quarantined), (v.Stage, v.Reason));
        wl.Release(2);
        Assert.True(f.Inspect(_w.Frame(2, 10, _w.Message(2, 1, 100, "x")), 0).Passed);
        Assert.Equal(1, f.Drops[SieveStage.Whitelist, DropReason.NotWhitelisted]);
    }

    [Fact]
    public void Replays_and_jumps_are_dropped_at_b()
    {
        var f = Filter(new PreSqOptions { WindowSize = 64, MaxAhead = 100 });
        var frame = _w.Frame(1, 10, _w.Message(1, 5, 100, "x"));
        Assert.True(f.Inspect(frame, 0).Passed);
        Assert.Equal(DropReason.Replay, f.Inspect(frame, 0).Reason);
        Assert.Equal(DropReason.TooFarAhead, f.Inspect(_w.Frame(1, 10, _w.Message(1, 500, 100, "x")), 0).Reason);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 105, 100, "x")), 0).Passed);
        Assert.Equal(DropReason.TooOld, f.Inspect(_w.Frame(1, 10, _w.Message(1, 6, 100, "x")), 0).Reason);
    }

    [Fact]
    public void A_sender_quiet_here_for_a_while_may_jump_ahead_and_then_retransmit_below()
    {
        // The stall this prevents: a sender's messages forwarded by one pre-SQ were dropped by the ordering,
        // and its retransmissions reached a pre-SQ whose window for it had not moved since it last came by.
        var f = Filter(new PreSqOptions { ReadoptAfterMs = 1_000 });
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 5, 100, "x")), 0).Passed);
        Assert.Equal(DropReason.TooFarAhead, f.Inspect(_w.Frame(1, 10, _w.Message(1, 50_000, 100, "x")), 999).Reason);
        // ACKREQs pass meanwhile but do not make the window fresh again.
        Assert.True(f.Inspect(_w.Frame(1, 10, AckRequestCodec.Encode(1, 10, 5, 1, _w.SenderSigning[1])), 999).Passed);
        // A forged far-ahead frame of a quiet sender is undone with everything else.
        var forged = _w.Frame(1, 10, _w.Message(1, 50_000, 100, "x")).ToArray();
        forged[^1] ^= 1;
        Assert.Equal(DropReason.BadMac, f.Inspect(forged, 1_000).Reason);
        Assert.Equal(0, f.Readoptions);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 50_000, 100, "x")), 1_000).Passed);
        Assert.Equal(1, f.Readoptions);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 49_000, 100, "below, inside the window")), 1_001).Passed);
        Assert.Equal(DropReason.Replay, f.Inspect(_w.Frame(1, 10, _w.Message(1, 50_000, 100, "x")), 1_002).Reason);
        Assert.Equal(DropReason.TooOld, f.Inspect(_w.Frame(1, 10, _w.Message(1, 5, 100, "x")), 1_002).Reason);
        // Fresh again: the next jump is refused until the sender has been quiet here once more.
        Assert.Equal(DropReason.TooFarAhead, f.Inspect(_w.Frame(1, 10, _w.Message(1, 90_000, 100, "x")), 1_500).Reason);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 90_000, 100, "x")), 2_002).Passed);
        Assert.Equal(2, f.Readoptions);
    }

    [Fact]
    public void A_bad_mac_undoes_the_sequence_mark_so_the_genuine_message_still_passes()
    {
        var f = Filter();
        var genuine = _w.Frame(1, 10, _w.Message(1, 1, 100, "real"));
        var forged = genuine.ToArray();
        forged[^1] ^= 1;
        var v = f.Inspect(forged, 0);
        Assert.Equal((SieveStage.Mac, DropReason.BadMac), (v.Stage, v.Reason));
        Assert.True(f.Inspect(genuine, 0).Passed);

        // Same with a forged frame that moves the window far ahead first.
        var far = _w.Frame(1, 10, _w.Message(1, 5000, 100, "far")).ToArray();
        far[^3] ^= 1;
        Assert.Equal(DropReason.BadMac, f.Inspect(far, 0).Reason);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 2, 100, "next")), 0).Passed);
        // A frame MACed for another pre-SQ fails (c), as does one with the wrong key.
        Assert.Equal(DropReason.WrongDestination, f.Inspect(_w.Frame(1, 11, _w.Message(1, 3, 100, "x")), 0).Reason);
        Assert.Equal(DropReason.BadMac, f.Inspect(SenderFrameCodec.Encode(10, _w.Message(1, 3, 100, "x"), _w.SenderPreSqRing(2, 10)), 0).Reason);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 3, 100, "x")), 0).Passed);
    }

    [Fact]
    public void Grant_is_exceeded_and_refilled_by_time_at_d()
    {
        var f = Filter(new PreSqOptions { GrantRatePerSecond = 2, GrantBurst = 2 });
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 1, 100, "a")), 0).Passed);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 2, 100, "b")), 0).Passed);
        var third = _w.Frame(1, 10, _w.Message(1, 3, 100, "c"));
        var v = f.Inspect(third, 0);
        Assert.Equal((SieveStage.Grant, DropReason.GrantExceeded), (v.Stage, v.Reason));
        // The mark was undone too, so the same frame passes once the grant refills.
        Assert.True(f.Inspect(third, 500).Passed);
        // Another sender has its own grant.
        Assert.True(f.Inspect(_w.Frame(2, 10, _w.Message(2, 1, 100, "z")), 0).Passed);
        f.AdjustGrant(1, 1000, 1000);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 4, 100, "d")), 600).Passed);
    }

    [Fact]
    public void Ackreq_passes_a_c_d_without_a_sequence_number()
    {
        var f = Filter();
        var ack = AckRequestCodec.Encode(1, 10, 5, 1, _w.SenderSigning[1]);
        var v = f.Inspect(_w.Frame(1, 10, ack), 0);
        Assert.True(v.Passed);
        Assert.Equal(StructureKind.AckRequest, v.Kind);
        Assert.Equal(DropReason.Malformed, f.Inspect(new byte[] { 8, 0, 1 }, 0).Reason);
    }

    /// <summary>Issue 16, item 6: a recorded ACKREQ replayed over and over spent the sender's grant at (d).</summary>
    [Fact]
    public void A_replayed_ackreq_is_refused_before_it_spends_the_grant()
    {
        var f = Filter(new PreSqOptions { GrantRatePerSecond = 1, GrantBurst = 3 });
        var recorded = _w.Frame(1, 10, AckRequestCodec.Encode(1, 10, 5, 7, _w.SenderSigning[1]));
        Assert.True(f.Inspect(recorded, 0).Passed);
        for (var i = 0; i < 100; i++)
        {
            var v = f.Inspect(recorded, 0);
            Assert.Equal((SieveStage.Sequence, DropReason.StaleNonce), (v.Stage, v.Reason));
        }
        // An older nonce is refused too; the sender's own traffic still has its grant.
        Assert.Equal(DropReason.StaleNonce, f.Inspect(_w.Frame(1, 10, AckRequestCodec.Encode(1, 10, 5, 6, _w.SenderSigning[1])), 0).Reason);
        Assert.True(f.Inspect(_w.Frame(1, 10, _w.Message(1, 11, 100, "a")), 0).Passed);
        Assert.True(f.Inspect(_w.Frame(1, 10, AckRequestCodec.Encode(1, 11, 5, 8, _w.SenderSigning[1])), 0).Passed);
    }

    [Fact]
    public void Fuzzed_frames_never_throw_from_the_filter()
    {
        var f = Filter();
        var seed = _w.Frame(1, 10, _w.Message(1, 1, 100, "seed"));
        var rng = new Random(7);
        for (var i = 0; i < 20_000; i++)
        {
            var v = f.Inspect(EnvelopeTests.Mutate(seed, rng), i);
            Assert.False(v.Passed && v.Seq != 1);
        }
    }

    [Fact]
    public void Batcher_closes_on_size_and_on_delay()
    {
        using var b = new OrderingBatcher(10, new PreSqOptions { BatchMaxItems = 3, BatchMaxDelayMs = 5 });
        var m = _w.Message(1, 1, 100, "x");
        Assert.Null(b.Add(m, 0));
        Assert.Null(b.Add(m, 1));
        var full = b.Add(m, 2);
        Assert.NotNull(full);
        Assert.Equal(3, OrderingRequestCodec.Decode(full).Items.Count);
        Assert.Null(b.Add(m, 10));
        Assert.Equal(15, b.Deadline);
        Assert.Null(b.Poll(14));
        var late = b.Poll(15);
        Assert.NotNull(late);
        var req = OrderingRequestCodec.Decode(late);
        Assert.Equal((10, 1), (req.Origin, req.Items.Count));
        Assert.Equal(m, req.Items[0].ToArray());
        Assert.Null(b.Flush());
    }

    [Fact]
    public void Batcher_closes_on_bytes()
    {
        using var b = new OrderingBatcher(10, new PreSqOptions { BatchMaxBytes = 300 });
        var m = _w.Message(1, 1, 100, new byte[100]);
        Assert.Null(b.Add(m, 0));
        var closed = b.Add(m, 0);
        Assert.NotNull(closed);
        Assert.Single(OrderingRequestCodec.Decode(closed).Items);
        Assert.Equal(1, b.Count);
    }

    [Fact]
    public void Load_monitor_warns_near_capacity_and_not_when_idle()
    {
        var mon = new PreSqLoadMonitor(10, capacityPerSecond: 1000, warnAtPermille: 800, minWarnIntervalMs: 1000);
        byte[]? warn = null;
        // 500 msg/s: half capacity.
        for (long t = 0; t < 2_000_000; t += 2000)
        {
            warn ??= mon.OnArrival(t);
        }
        Assert.Null(warn);
        Assert.InRange(mon.LoadPermille, 450, 550);
        // 2000 msg/s: twice capacity.
        for (long t = 2_000_000; t < 3_000_000; t += 500)
        {
            warn ??= mon.OnArrival(t);
        }
        Assert.NotNull(warn);
        var w = LoadWarningCodec.Decode(warn);
        Assert.Equal(10, w.PreSq);
        Assert.True(w.LoadPermille >= 800);
    }

    [Fact]
    public void Load_monitor_counts_a_second_of_frames_so_a_burst_of_retransmissions_is_no_overload()
    {
        // 20,000 frames/s capacity: 1,000 frames a second, each second's arriving as one burst of 4,000 back to back
        // every fourth second (a sender retransmitting a lost window). An average over the last intervals read such a
        // burst as thousands of times capacity and warned; the replicas then held the pre-SQ unhealthy for ten seconds.
        var mon = new PreSqLoadMonitor(10, capacityPerSecond: 20_000);
        byte[]? warn = null;
        for (long second = 0; second < 20; second++)
        {
            var start = second * 1_000_000;
            for (long i = 0; i < 1_000; i++)
            {
                warn ??= mon.OnArrival(start + (i * 1_000));
            }
            if (second % 4 == 3)
            {
                for (long i = 0; i < 4_000; i++)
                {
                    warn ??= mon.OnArrival(start + 500_000 + (i / 100));
                }
            }
        }
        Assert.Null(warn);
        // 17,000 frames/s for one second is overload: a warning within that second, at 800 per mille or more.
        for (long t = 20_000_000; t < 21_000_000 && warn is null; t += 59)
        {
            warn = mon.OnArrival(t);
        }
        Assert.NotNull(warn);
        Assert.InRange(LoadWarningCodec.Decode(warn).LoadPermille, 800, 900);
        // A silent second empties the window.
        Assert.Null(mon.OnArrival(23_000_000));
        Assert.Equal(0, mon.LoadPermille);
    }
}
