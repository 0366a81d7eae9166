using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Bench;
using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Replica;

namespace SieveQ.Bft.Tests.Hosting;

/// <summary>Four real replica hosts in one process over loopback TCP: the whole host stack minus process boundaries.</summary>
public sealed class ReplicaHostClusterTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task RequestsAreOrderedOnceWithAgreeingResultsAndStates(bool durability)
    {
        using var cluster = new TempCluster(replicas: 4, clients: 2, new ReplicaConfig { CheckpointInterval = 16 }, durability);
        var apps = new BenchmarkApplication[4];
        var hosts = new List<ReplicaHost>();
        try
        {
            for (var i = 0; i < 4; i++)
            {
                apps[i] = new BenchmarkApplication();
                var app = apps[i];
                var host = new ReplicaHost(cluster.Config, i, ClusterBootstrap.LoadKey(cluster.Config, i), app, NullLoggerFactory.Instance, appState: () => app.StateDescription);
                host.Start();
                hosts.Add(host);
            }
            await using var client = new BftClient(cluster.Config, 4, ClusterBootstrap.LoadKey(cluster.Config, 4), new BftClientOptions { Window = 16 });
            Assert.True(await client.WaitConnectedAsync(4, TimeSpan.FromSeconds(10)));
            var results = await Task.WhenAll(Enumerable.Range(0, 100).Select(i => client.SubmitAsync(new byte[i], CancellationToken.None)))
                .WaitAsync(TimeSpan.FromSeconds(60));
            var indices = results.Select(r => BenchmarkApplication.ExecutionIndexOf(r.Result)).Order().ToList();
            Assert.Equal(Enumerable.Range(1, 100).Select(i => (long)i), indices);

            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
            while (apps.Any(a => a.Count != 100) && DateTime.UtcNow < deadline)
            {
                await Task.Delay(50);
            }
            Assert.All(apps, a => Assert.Equal(apps[0].StateDescription, a.StateDescription));
        }
        finally
        {
            foreach (var h in hosts)
            {
                await h.DisposeAsync();
            }
        }
    }
}
