using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.PreSq.Tests;

/// <summary>
/// Frames built with the real codecs and the senders' real keys go over HTTP/2 to the pre-SQ, which
/// orders what passes through 4 real BFT replicas; the replicas' application shows what arrived.
/// </summary>
[Collection(PreSqCollection.Name)]
public sealed class FilteringTests(PreSqTestBed bed)
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    private PreSqHost Host => bed.Host;

    private TestSender Sender(int id) => new(bed.Deployment.Context, id, bed.PreSqId);

    [Fact]
    public async Task Good_frames_are_ordered_exactly_as_the_sender_signed_them()
    {
        using var s = Sender(1);
        await using var session = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        var messages = Enumerable.Range(1, 20).Select(i => s.Message(i, $"message {i}")).ToList();
        await session.SendAsync([.. messages.Select(m => s.Wrap(m))]);
        await session.SendAsync(s.AckRequestFrame(lastSent: 20, nonce: 1));

        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(1).Count == 20, Patience), "messages not ordered");
        Assert.Equal(Enumerable.Range(1, 20).Select(i => (long)i), bed.OrderedSeqs(1).Order());
        var ordered = bed.OrderedItems().Where(i => i[0] == (byte)StructureKind.SenderMessage && SenderMessageCodec.Decode(i).Sender == 1).ToList();
        Assert.All(messages, m => Assert.Contains(ordered, o => o.AsSpan().SequenceEqual(m)));
        Assert.True(await PreSqTestBed.WaitUntilAsync(
            () => bed.OrderedItems().Any(i => i[0] == (byte)StructureKind.AckRequest && AckRequestCodec.Decode(i).Sender == 1), Patience), "ACKREQ not ordered " + bed.StateForFailure());
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => Host.Metrics.Accepted >= 21 && Host.Metrics.Batches >= 1, Patience), "ordering results not counted");
    }

    [Fact]
    public async Task A_bad_mac_is_dropped_and_does_not_burn_the_genuine_frames_number()
    {
        using var s = Sender(2);
        var otherPreSq = bed.Deployment.Context.Config.PreSqs[1].Id;
        await using var session = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        var before = Host.Drops[SieveStage.Mac, DropReason.BadMac];
        var genuine = s.Message(1, "real");
        var tampered = s.Frame(2, "tampered");
        tampered[30] ^= 0x01; // first DATA byte: frame header 9 + message header 21

        await session.SendAsync(s.Wrap(genuine, macFor: otherPreSq), tampered);
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => Host.Drops[SieveStage.Mac, DropReason.BadMac] == before + 2, Patience));

        await session.SendAsync(s.Wrap(genuine), s.Frame(2, "retransmitted"));
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(2).Count == 2, Patience), "genuine frames not ordered");
        Assert.Equal([1L, 2L], bed.OrderedSeqs(2).Order());
        Assert.Contains(bed.OrderedItems(), i => i.AsSpan().SequenceEqual(genuine));
        Assert.DoesNotContain(bed.OrderedItems(), i => i[0] == (byte)StructureKind.SenderMessage && SenderMessageCodec.Decode(i).Data.Span.SequenceEqual("tampered"u8));
    }

    [Fact]
    public async Task A_sender_not_on_the_whitelist_is_dropped_at_a()
    {
        using var s = Sender(3);
        await using var session = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        var before = Host.Drops[SieveStage.Whitelist, DropReason.NotWhitelisted];
        Host.Whitelist.Remove(3);
        try
        {
            await session.SendAsync(s.Frame(1), s.Frame(2));
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => Host.Drops[SieveStage.Whitelist, DropReason.NotWhitelisted] == before + 2, Patience));
        }
        finally
        {
            Host.Whitelist.Allow(3);
        }
        // Same stream, so the loop handled the refused frames first: once this one is ordered, they never will be.
        await session.SendAsync(s.Frame(3));
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(3).Count == 1, Patience));
        Assert.Equal([3L], bed.OrderedSeqs(3));
    }

    [Fact]
    public async Task A_replayed_sequence_number_is_dropped_at_b()
    {
        using var s = Sender(4);
        await using var session = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        var before = Host.Drops[SieveStage.Sequence, DropReason.Replay];
        var first = s.Frame(1);
        var second = s.Frame(2);
        await session.SendAsync(first, second, first, second, s.Frame(1, "same number, new content"));
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => Host.Drops[SieveStage.Sequence, DropReason.Replay] == before + 3, Patience));

        await session.SendAsync(s.Frame(3));
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(4).Contains(3), Patience), bed.StateForFailure());
        Assert.Equal([1L, 2L, 3L], bed.OrderedSeqs(4).Order());
    }

    [Fact]
    public async Task Frames_beyond_the_senders_grant_are_dropped_at_d_and_their_numbers_stay_usable()
    {
        using var s = Sender(5);
        await Host.AdjustGrantAsync(5, ratePerSecond: 1, burst: 3);
        await using var session = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        var before = Host.Drops[SieveStage.Grant, DropReason.GrantExceeded];
        var frames = Enumerable.Range(1, 10).Select(i => s.Frame(i)).ToArray();
        await session.SendAsync(frames);

        long Overruns() => Host.Drops[SieveStage.Grant, DropReason.GrantExceeded] - before;
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => Overruns() + bed.OrderedSeqs(5).Count == 10, Patience));
        Assert.InRange(Overruns(), 5, 7);
        var ordered = bed.OrderedSeqs(5);
        Assert.Equal(ordered.Count, ordered.Distinct().Count());

        // (d) undid (b): once the bucket refills, the sender's retransmission of a refused number passes.
        var refused = Enumerable.Range(1, 10).First(i => !ordered.Contains(i));
        await Task.Delay(TimeSpan.FromMilliseconds(1_100));
        await session.SendAsync(frames[refused - 1]);
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(5).Contains(refused), Patience), "retransmission after refill not ordered");
    }

    [Fact]
    public async Task A_burst_beyond_capacity_sends_a_warnreq_through_the_ordering()
    {
        using var s = Sender(7);
        await using var session = await SenderSession.OpenAsync(Host.Address, Host.TlsPin);
        var before = Host.Metrics.WarnRequests;
        // Capacity is 5 frames/s in the test bed, so bursts bring the average interval far below it. The
        // monitor warns at most once a second, and earlier tests may just have had their warning: keep
        // the load up until this one comes.
        var sent = 0;
        var deadline = DateTime.UtcNow + Patience;
        while (Host.Metrics.WarnRequests == before && DateTime.UtcNow < deadline)
        {
            await session.SendAsync([.. Enumerable.Range(sent + 1, 50).Select(i => s.Frame(i))]);
            sent += 50;
            await PreSqTestBed.WaitUntilAsync(() => Host.Metrics.WarnRequests > before, TimeSpan.FromMilliseconds(300));
        }
        Assert.True(Host.Metrics.WarnRequests > before, "no WARNREQ; " + bed.StateForFailure());
        Assert.True(await PreSqTestBed.WaitUntilAsync(
            () => bed.OrderedItems().Any(i => i[0] == (byte)StructureKind.LoadWarning && LoadWarningCodec.Decode(i).PreSq == bed.PreSqId), Patience),
            "WARNREQ not ordered; " + bed.StateForFailure());
        var warning = LoadWarningCodec.Decode(bed.OrderedItems().Last(i => i[0] == (byte)StructureKind.LoadWarning));
        Assert.True(warning.LoadPermille >= PreSqTestBed.Options.WarnAtPermille, $"warned at {warning.LoadPermille} permille");
        Assert.True(await PreSqTestBed.WaitUntilAsync(() => bed.OrderedSeqs(7).Distinct().Count() == sent, Patience),
            $"{bed.OrderedSeqs(7).Distinct().Count()} of {sent} ordered; " + bed.StateForFailure());
        Assert.Equal(sent, bed.OrderedSeqs(7).Count); // none twice
    }
}
