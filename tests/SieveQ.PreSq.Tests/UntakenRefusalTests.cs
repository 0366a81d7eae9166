using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Deployment;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.PreSq;

namespace SieveQ.PreSq.Tests;

/// <summary>
/// The replicas' "refused untaken" results reach the filter whatever the loop's inbox holds: one skipped because the
/// inbox was full of frames left its messages marked as passed for good, and their retransmissions refused as replays.
/// </summary>
[Collection(PreSqCollection.Name)]
public sealed class UntakenRefusalTests(PreSqTestBed bed)
{
    [Fact]
    public async Task A_refusal_that_arrives_while_the_inbox_is_full_is_applied_and_the_message_passes_again()
    {
        var ctx = bed.Deployment.Context;
        // The deployment's other pre-SQ, run here as a bare loop that is not started yet (the bed's host is the first).
        var id = ctx.Config.PreSqs[1].Id;
        using var keys = ctx.Keys(PartyRole.PreSq, id);
        var filter = new PreSqFilter(id, new PreSqOptions(), new SenderWhitelist(ctx.Enrolment.Senders.Select(s => s.Id)), s => keys.Ring(MacChannel.SenderPreSq, s));
        using var sender = new TestSender(ctx, 9, id);
        var frame = sender.Frame(1);
        Assert.True(filter.Inspect(frame, 0).Passed);
        Assert.False(filter.Inspect(frame, 1).Passed);

        var state = Directory.CreateTempSubdirectory("sieveq-untaken-").FullName;
        var metrics = new PreSqMetrics(id);
        await using var client = new BftClient(ctx.Cluster, id, ClusterBootstrap.LoadKey(ctx.Cluster, id));
        var forwarder = new OrderingForwarder(client, OrderingSequenceReservation.Open(state), 4, metrics);
        var loop = new SieveLoop(filter, new OrderingBatcher(id, new PreSqOptions()), new PreSqLoadMonitor(id, 1_000), forwarder,
            new SenderStreams(metrics), metrics, queueItems: 3);
        await using (loop)
        {
            var filled = 0;
            while (loop.TryPostToLoop(static _ => { }))
            {
                filled++;
            }
            Assert.Equal(3, filled);

            loop.PostUntaken([new UntakenMessage(9, 1)]);
            Assert.Equal(1, loop.UntakenPending);

            loop.Start();
            var passedAgain = false;
            await loop.RunOnLoopAsync(f => passedAgain = f.Inspect(frame, 2).Passed).WaitAsync(TimeSpan.FromSeconds(30));
            Assert.True(passedAgain, "the refused message is still marked as passed: its retransmission was refused as a replay");
            Assert.Equal(0, loop.UntakenPending);
            Assert.Equal(1, filter.UntakenForgotten);

            // A quarantine f+1 replicas reported is applied the same way: the sender's frames stop at check (a).
            loop.PostQuarantines([new SenderQuarantineHold(9, 60_000)]);
            var refused = false;
            await loop.RunOnLoopAsync(f => refused = !f.Inspect(sender.Frame(2), 3).Passed).WaitAsync(TimeSpan.FromSeconds(30));
            Assert.True(refused, "the pre-SQ passed a frame of a sender the replicas reported quarantined");
            Assert.Equal((0, 1L), (loop.QuarantinesPending, filter.QuarantinesFollowed));
            Assert.Equal(1, filter.Drops[SieveQ.Sieve.Filtering.SieveStage.Whitelist, SieveQ.Sieve.Filtering.DropReason.Quarantined]);
        }
        Directory.Delete(state, recursive: true);
    }
}
