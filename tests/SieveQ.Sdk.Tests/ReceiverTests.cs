using SieveQ.Agent.Hosting;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Tests.Fakes;

namespace SieveQ.Sdk.Tests;

/// <summary>The SDK's post-SQ against four fake replica-SQ streams carrying real rendered outputs, one of them lying.</summary>
public sealed class ReceiverTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    private static SieveQReceiverOptions Fast() => new()
    {
        Protocol = new Sieve.Receiver.PostSqOptions { FetchGraceMs = 20, FetchRetryMs = 100 },
        AcknowledgeRetry = TimeSpan.FromMilliseconds(100),
    };

    /// <summary>Reads exactly <paramref name="count"/> deliveries, then checks that nothing more arrives for a moment.</summary>
    private static async Task<List<ReceivedMessage>> ReadExactlyAsync(SieveQReceiver receiver, int count, bool commitEach = false)
    {
        var got = new List<ReceivedMessage>();
        using (var cts = new CancellationTokenSource(Patience))
        {
            await foreach (var m in receiver.ReadAllAsync(cts.Token))
            {
                got.Add(m);
                if (commitEach)
                {
                    await receiver.CommitAsync(cts.Token);
                }
                if (got.Count == count)
                {
                    break;
                }
            }
        }
        using var quiet = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
        try
        {
            await foreach (var extra in receiver.ReadAllAsync(quiet.Token))
            {
                got.Add(extra);
            }
        }
        catch (OperationCanceledException)
        {
        }
        return got;
    }

    private static void AssertExactlyOnceInOrder(List<ReceivedMessage> got, Dictionary<(int Sender, long Seq), byte[]> truth, long firstRoute = 1)
    {
        Assert.Equal(truth.Count, got.Count);
        foreach (var bySender in got.GroupBy(m => m.Sender))
        {
            var routes = bySender.Select(m => m.RouteSeq).ToList();
            Assert.Equal(Enumerable.Range(0, routes.Count).Select(i => firstRoute + i), routes);
        }
        foreach (var m in got)
        {
            Assert.Equal(truth[(m.Sender, m.SenderSeq)], m.Data.ToArray());
        }
    }

    [Theory]
    [InlineData(ReplicaBehaviour.WrongDigest)]
    [InlineData(ReplicaBehaviour.WrongBody)]
    public async Task Delivers_exactly_once_and_in_order_despite_a_lying_replica(ReplicaBehaviour lie)
    {
        await using var world = await SieveWorld.StartAsync();
        world.Cluster.Behaviour[2] = lie;
        await using var receiver = SieveQReceiver.Create(world.Context.ToClientConfiguration(), SieveWorld.Receiver, world.StateDir("receiver"), Fast());
        var truth = world.Publish([1, 2], firstSeq: 1, count: 100);
        var got = await ReadExactlyAsync(receiver, truth.Count);
        AssertExactlyOnceInOrder(got, truth);
        Assert.True(receiver.Stats.OutputsAccepted > 0);
    }

    [Fact]
    public async Task Fetches_a_body_the_designated_replica_withheld()
    {
        await using var world = await SieveWorld.StartAsync();
        world.Cluster.Behaviour[1] = ReplicaBehaviour.WithholdBodies;
        await using var receiver = SieveQReceiver.Create(world.Context.ToClientConfiguration(), SieveWorld.Receiver, world.StateDir("receiver"), Fast());
        // Give every replica its subscription first, so each batch reaches all four as it is executed.
        await Task.Delay(300);
        var truth = world.Publish([1], firstSeq: 1, count: 40, perRequest: 1);
        var got = await ReadExactlyAsync(receiver, truth.Count);
        AssertExactlyOnceInOrder(got, truth);
        Assert.True(receiver.Stats.FetchesSent > 0, "no body fetch although replica 1 withheld its bodies");
        Assert.True(receiver.Stats.FetchesAnswered > 0, "no fetched body was used");
        Assert.True(world.Cluster.FetchCalls.Where((_, r) => r != 1).Sum() > 0, "the bodies must have come from a replica that has them");
    }

    [Fact]
    public async Task Resumes_after_a_restart_without_duplicates()
    {
        await using var world = await SieveWorld.StartAsync();
        var truth = world.Publish([1], firstSeq: 1, count: 50);
        await using (var first = SieveQReceiver.Create(world.Context.ToClientConfiguration(), SieveWorld.Receiver, world.StateDir("receiver"), Fast()))
        {
            var got = new List<ReceivedMessage>();
            using var cts = new CancellationTokenSource(Patience);
            await foreach (var m in first.ReadAllAsync(cts.Token))
            {
                got.Add(m);
                if (got.Count == 30)
                {
                    await first.CommitAsync(cts.Token);
                    break;
                }
            }
            Assert.Equal(Enumerable.Range(1, 30).Select(i => (long)i), got.Select(m => m.RouteSeq));
        }
        // The acknowledgement went through a pre-SQ into the ordering: the replicas dropped what was committed.
        Assert.True(world.Server.AcknowledgementsQueued.Values.Sum() >= 1);
        Assert.Equal(20, world.Cluster.QueueLength(SieveWorld.Receiver));

        var more = world.Publish([1], firstSeq: 51, count: 20);
        await using var second = SieveQReceiver.Create(world.Context.ToClientConfiguration(), SieveWorld.Receiver, world.StateDir("receiver"), Fast());
        var rest = await ReadExactlyAsync(second, 40, commitEach: true);
        var expected = truth.Where(kv => kv.Key.Seq > 30).Concat(more).ToDictionary(kv => kv.Key, kv => kv.Value);
        AssertExactlyOnceInOrder(rest, expected, firstRoute: 31);
    }

    [Fact]
    public async Task Auto_commit_persists_what_the_application_took()
    {
        await using var world = await SieveWorld.StartAsync();
        var options = Fast() with { AutoCommitEvery = 10 };
        world.Publish([1], firstSeq: 1, count: 25);
        await using (var receiver = SieveQReceiver.Create(world.Context.ToClientConfiguration(), SieveWorld.Receiver, world.StateDir("receiver"), options))
        {
            var got = await ReadExactlyAsync(receiver, 25);
            Assert.Equal(25, got.Count);
            // The idle wait after the last delivery commits the tail too.
            Assert.Equal(25, receiver.CommittedCursors.Single().DeliveredUpTo);
        }
    }
}
