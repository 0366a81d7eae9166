using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Sieve.Envelope;

namespace SieveQ.PreSq.Tests;

/// <summary>
/// Health must see a pre-SQ whose ordering requests go unanswered (issue 16, item 9): the forwarder knows how long
/// its oldest request in flight has waited. Here the replicas it talks to do not exist, so nothing is answered.
/// </summary>
[Collection(PreSqCollection.Name)]
public sealed class UnansweredOrderingTests(PreSqTestBed bed)
{
    [Fact]
    public async Task The_oldest_unanswered_request_is_measured_and_cleared_when_it_ends()
    {
        var ctx = bed.Deployment.Context;
        var id = ctx.Config.PreSqs[1].Id;
        var nowhere = ctx.Cluster.Replicas.Select((r, i) => r with { Endpoint = $"127.0.0.1:{9 + i}" }).ToList();
        var identity = ClusterBootstrap.LoadKey(ctx.Cluster, id);
        var client = new BftClient(ctx.Cluster.Protocol, nowhere, ctx.Cluster.Links, new KeyRing(ctx.Cluster), id, identity);
        var dir = Directory.CreateTempSubdirectory("sieveq-unanswered-").FullName;
        using var metrics = new PreSqMetrics(id);
        var forwarder = new OrderingForwarder(client, OrderingSequenceReservation.Open(dir), maxInFlight: 4, metrics);
        try
        {
            Assert.Equal(TimeSpan.Zero, forwarder.OldestUnanswered);
            Assert.True(forwarder.TryTakeSlot());
            forwarder.Submit(OrderingRequestCodec.Encode(id, [AckRequestFor(ctx)]), 1);
            await Task.Delay(400);
            Assert.Equal(1, forwarder.InFlight);
            Assert.True(forwarder.OldestUnanswered >= TimeSpan.FromMilliseconds(350), $"oldest unanswered {forwarder.OldestUnanswered}");
        }
        finally
        {
            await forwarder.DisposeAsync();
            identity.Dispose();
            Directory.Delete(dir, recursive: true);
        }
        Assert.Equal(0, forwarder.InFlight);
        Assert.Equal(TimeSpan.Zero, forwarder.OldestUnanswered);
    }

    private static byte[] AckRequestFor(SieveQ.Deployment.DeploymentContext ctx)
    {
        using var keys = ctx.Keys(SieveQ.Deployment.PartyRole.Sender, ctx.Enrolment.Senders[0].Id);
        return AckRequestCodec.Encode(ctx.Enrolment.Senders[0].Id, 1, 2, 7, keys.Signing!);
    }
}
