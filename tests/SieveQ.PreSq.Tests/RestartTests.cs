using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.PreSq;

namespace SieveQ.PreSq.Tests;

/// <summary>A pre-SQ process restarting as the same ordering client (the second pre-SQ of the deployment).</summary>
[Collection(PreSqCollection.Name)]
public sealed class RestartTests(PreSqTestBed bed)
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_restarted_pre_sq_goes_on_ordering_and_lets_the_frames_lost_in_its_reused_request_numbers_pass_again()
    {
        var ctx = bed.Deployment.Context;
        var id = ctx.Config.PreSqs[1].Id;
        // One frame per ordering request, so request numbers advance quickly; no WARNREQ requests in between.
        var options = PreSqTestBed.Options with { Filter = new PreSqOptions { BatchMaxItems = 1 }, CapacityPerSecond = 1e9 };
        using var s = new TestSender(ctx, 9, id);
        List<long> Ordered() => [.. bed.Ordering.Apps[0].Items.Where(i => i.Client == id && i.Item[0] == (byte)StructureKind.SenderMessage)
            .Select(i => SenderMessageCodec.Decode(i.Item)).Where(m => m.Sender == 9).Select(m => m.Seq)];

        // More requests than the replicas remember replies for: a client starting over at 1 would never be answered.
        const int firstRun = 300;
        await using (var host = PreSqHost.Create(ctx, id, options))
        {
            await host.StartAsync();
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => host.Health().Counters["ordering_replicas_connected"] == 4, Patience));
            await using var session = await SenderSession.OpenAsync(host.Address, host.TlsPin);
            await session.SendAsync([.. Enumerable.Range(1, firstRun).Select(i => s.Frame(i))]);
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => Ordered().Count == firstRun, Patience), $"first run: {Ordered().Count} of {firstRun} ordered");
        }

        const int secondRun = 80;
        await using (var host = PreSqHost.Create(ctx, id, options))
        {
            await host.StartAsync();
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => host.Health().Counters["ordering_replicas_connected"] == 4, Patience));
            await using var session = await SenderSession.OpenAsync(host.Address, host.TlsPin);
            await session.SendAsync([.. Enumerable.Range(firstRun + 1, secondRun).Select(i => s.Frame(i))]);
            // Every request completes (the reused numbers with their old results), so nothing is stuck in flight ...
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => host.Metrics.Batches == secondRun && host.Metrics.OrderingInFlight == 0, Patience),
                $"second run stalled: {host.Metrics.Batches} submitted, {host.Metrics.OrderingInFlight} in flight");
            // ... and at most one reservation block of frames went into reused numbers; the rest were ordered.
            // A request completes on f+1 replies, so replica 0, whose application the test reads, may be a little behind.
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => Ordered().Contains(firstRun + secondRun), Patience), $"frame {firstRun + secondRun} not ordered");
            var ordered = Ordered().Where(q => q > firstRun).ToList();
            Assert.InRange(ordered.Count, secondRun - OrderingSequenceReservation.Block, secondRun);

            // The frames that went into reused numbers were never ordered, and their sender has no acknowledgement for
            // them, so it sends them again through this pre-SQ: they must pass (those ordered already are refused as
            // replays). Refused here for good, they would stall the sender's stream at the replicas for ever.
            var expected = Enumerable.Range(firstRun + 1, secondRun).Select(i => (long)i).ToList();
            var lost = expected.Except(ordered).Count();
            Assert.True(lost > 0, "no frame went into a reused request number: the test shows nothing");
            await session.SendAsync([.. expected.Select(i => s.Frame(i))]);
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => !expected.Except(Ordered()).Any(), Patience),
                $"{expected.Except(Ordered()).Count()} of the {lost} frames lost in reused request numbers still not ordered after their retransmission");
            // A reused number may also have been free and taken the new frames: those pass again too, and the replicas'
            // own window (check (e)) refuses them there as replays, which this recording application does not model.
            Assert.Equal(expected, Ordered().Where(q => q > firstRun).Distinct().Order());
        }
    }
}
