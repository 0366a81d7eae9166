using System.Net.Sockets;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>A cluster whose replica-SQ API ports allow few connections per source and a short preface deadline.</summary>
public sealed class HardenedReplicaSqCluster : ReplicaSqCluster
{
    public const int PerSource = 4;

    protected override ReplicaSqHostOptions HostOptions => Options with { MaxConnectionsPerSource = PerSource, RequestHeadersTimeout = TimeSpan.FromSeconds(1) };
}

/// <summary>
/// Issue 16, item 5: the replica-SQ API had no per-source connection limit and no preface deadline. Connections
/// beyond the limit from one source are closed before HTTP/2 starts, and silent ones after the deadline.
/// </summary>
public sealed class ApiHardeningTests(HardenedReplicaSqCluster cluster) : IClassFixture<HardenedReplicaSqCluster>
{
    [Fact]
    public async Task Connections_beyond_the_per_source_limit_and_silent_ones_are_closed()
    {
        var host = cluster.Hosts[1];
        var api = cluster.ApiUrl(1);
        var refused = host.ConnectionLimiter.Refused;
        var silentClosed = host.Preface.Closed;
        var sockets = new List<TcpClient>();
        try
        {
            for (var i = 0; i < HardenedReplicaSqCluster.PerSource + 3; i++)
            {
                var c = new TcpClient();
                try
                {
                    await c.ConnectAsync(api.Host, api.Port);
                    sockets.Add(c);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset && i >= HardenedReplicaSqCluster.PerSource)
                {
                    // Over the limit, the server's reset can arrive before the connect completes here (a loaded machine):
                    // refused all the same, and counted below.
                    c.Dispose();
                }
            }
            await ReplicaSqCluster.EventuallyAsync(() => host.ConnectionLimiter.Refused >= refused + 3, "three connections over the per-source limit refused");
            // The silent ones within the limit are closed by the preface deadline (1 s here).
            await ReplicaSqCluster.EventuallyAsync(() => host.Preface.Closed >= silentClosed + HardenedReplicaSqCluster.PerSource, "the silent connections closed", timeoutMs: 15_000);
            foreach (var c in sockets)
            {
                Assert.True(await ClosedByPeerAsync(c), "a connection stayed open");
            }
            // The port still serves: health through gRPC answers once the silent connections are gone.
            Assert.True(host.Health().Healthy, host.Health().Detail);
        }
        finally
        {
            foreach (var c in sockets)
            {
                c.Dispose();
            }
        }
    }

    /// <summary>An orderly close reads 0 bytes; an aborted one (refused before HTTP/2) resets.</summary>
    private static async Task<bool> ClosedByPeerAsync(TcpClient c)
    {
        using var read = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        try
        {
            return await c.GetStream().ReadAsync(new byte[1], read.Token) == 0;
        }
        catch (IOException)
        {
            return true;
        }
    }
}
