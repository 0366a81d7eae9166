using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.PreSq;

namespace SieveQ.PreSq.Tests;

/// <summary>A pre-SQ process restarting as the same ordering client (the second pre-SQ of the deployment).</summary>
[Collection(PreSqCollection.Name)]
public sealed class RestartTests(PreSqTestBed bed)
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_restarted_pre_sq_spends_its_reused_request_numbers_before_the_first_batch_and_orders_every_frame_first_time()
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
            // Every request completes, so nothing is stuck in flight ...
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => host.Metrics.Batches == secondRun && host.Metrics.OrderingInFlight == 0, Patience),
                $"second run stalled: {host.Metrics.Batches} submitted, {host.Metrics.OrderingInFlight} in flight");
            // ... and the restart spent the previous run's last reservation block on queries before the first batch, so
            // every frame of this run went into a fresh number and was ordered on its first sending: no retransmission.
            Assert.Equal(OrderingSequenceReservation.Block, host.Metrics.ReusedNumbersSpent);
            Assert.Equal(0, host.Metrics.ReusedNumbersAnswered);
            var expected = Enumerable.Range(firstRun + 1, secondRun).Select(i => (long)i).ToList();
            Assert.True(await PreSqTestBed.WaitUntilAsync(() => !expected.Except(Ordered()).Any(), Patience),
                $"{expected.Except(Ordered()).Count()} of the {secondRun} frames sent after the restart not ordered (a reused request number took them?)");
            Assert.Equal(expected, Ordered().Where(q => q > firstRun).Order());
        }
    }
}
