using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Replica;

namespace SieveQ.PreSq.Tests;

/// <summary>The ordering side, for real: 3f+1 replica hosts of the BFT library on loopback, each running a <see cref="RecordingApplication"/>.</summary>
internal sealed class OrderingCluster : IAsyncDisposable
{
    private readonly List<ReplicaHost> _hosts = [];

    public OrderingCluster(ClusterConfig cluster)
    {
        for (var i = 0; i < cluster.N; i++)
        {
            var app = new RecordingApplication();
            Apps.Add(app);
            var host = new ReplicaHost(cluster, i, ClusterBootstrap.LoadKey(cluster, i), app, NullLoggerFactory.Instance);
            host.Start();
            _hosts.Add(host);
        }
    }

    public List<ReplicaHost> Hosts => _hosts;

    public List<RecordingApplication> Apps { get; } = [];

    public async ValueTask DisposeAsync()
    {
        foreach (var h in _hosts)
        {
            await h.DisposeAsync();
        }
    }
}
