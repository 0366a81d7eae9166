using System.Text.Json;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.PreSq;

namespace SieveQ.PreSq.Tests;

/// <summary>
/// One deployment shared by the tests of the "pre-sq" collection: 4 real BFT replicas with a recording
/// application, the fake replica API for ACKRES, and the pre-SQ under test, hardened with small limits
/// so the Slowloris tests finish quickly. Tests use disjoint senders, so they do not disturb each other.
/// </summary>
public sealed class PreSqTestBed : IAsyncLifetime
{
    internal static readonly PreSqHostOptions Options = new()
    {
        MaxConnectionsPerSource = 4,
        RequestHeadersTimeout = TimeSpan.FromSeconds(1),
        UnboundStreamTimeout = TimeSpan.FromSeconds(3),
        MinDataRateGracePeriod = TimeSpan.FromSeconds(1.5),
        RelayBackoffMin = TimeSpan.FromMilliseconds(50),
        RelayBackoffMax = TimeSpan.FromMilliseconds(500),
        // Low, so a burst of frames makes the load monitor warn.
        CapacityPerSecond = 5,
        Filter = new PreSqOptions { BatchMaxDelayMs = 2 },
    };

    private TestDeployment? _deployment;
    private OrderingCluster? _ordering;
    private FakeReplicaApi? _api;
    private PreSqHost? _host;

    internal TestDeployment Deployment => _deployment!;
    internal OrderingCluster Ordering => _ordering!;
    internal FakeReplicaApi ReplicaApi => _api!;
    public PreSqHost Host => _host!;

    public int PreSqId => Deployment.Context.Config.PreSqs[0].Id;

    public async Task InitializeAsync()
    {
        _deployment = new TestDeployment();
        var ctx = _deployment.Context;
        _ordering = new OrderingCluster(ctx.Cluster);
        _api = await FakeReplicaApi.StartAsync(ctx);
        _host = PreSqHost.Create(ctx, PreSqId, Options);
        await _host.StartAsync();
        var ready = await WaitUntilAsync(() => _host.Health().Healthy, TimeSpan.FromSeconds(20));
        Assert.True(ready, "pre-SQ not healthy: " + _host.Health().Detail);
    }

    /// <summary>Items this pre-SQ got ordered, as executed by replica 0.</summary>
    internal IEnumerable<byte[]> OrderedItems() =>
        Ordering.Apps[0].Items.Where(i => i.Client == PreSqId && i.Origin == PreSqId).Select(i => i.Item);

    /// <summary>Sequence numbers of a sender's messages in ordered requests, in execution order.</summary>
    internal List<long> OrderedSeqs(int sender) =>
        OrderedItems().Where(i => i[0] == (byte)StructureKind.SenderMessage)
            .Select(i => SenderMessageCodec.Decode(i))
            .Where(m => m.Sender == sender)
            .Select(m => m.Seq)
            .ToList();

    /// <summary>What a failed wait prints: each replica's executed count and status, and the pre-SQ's counters.</summary>
    internal string StateForFailure() =>
        "replicas: " + string.Join(" | ", Ordering.Hosts.Select((h, i) => $"executed {Ordering.Apps[i].Executed} {JsonSerializer.Serialize(h.Status)}"))
        + "; pre-SQ: " + JsonSerializer.Serialize(Host.Metrics.Snapshot());

    internal static async Task<bool> WaitUntilAsync(Func<bool> condition, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                return false;
            }
            await Task.Delay(20);
        }
        return true;
    }

    public async Task DisposeAsync()
    {
        if (_host is not null)
        {
            await _host.DisposeAsync();
        }
        if (_api is not null)
        {
            await _api.DisposeAsync();
        }
        if (_ordering is not null)
        {
            await _ordering.DisposeAsync();
        }
        _deployment?.Dispose();
    }
}

[CollectionDefinition(Name)]
public sealed class PreSqCollection : ICollectionFixture<PreSqTestBed>
{
    public const string Name = "pre-sq";
}
