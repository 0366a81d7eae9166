using System.Net;
using System.Net.Sockets;
using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

/// <summary>Loopback ports for temporary clusters and deployments: free when found, and below the ephemeral ranges.</summary>
public sealed class PortPlanTests
{
    [Fact]
    public void A_free_block_for_a_temporary_cluster_is_bindable_and_below_the_ephemeral_ranges()
    {
        for (var i = 0; i < 20; i++)
        {
            var start = PortPlan.FindFreeBlock(7);
            Assert.InRange(start, 20_000, 32_000 - 7);
            var sockets = Enumerable.Range(start, 7).Select(port =>
            {
                var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                s.Bind(new IPEndPoint(IPAddress.Loopback, port));
                return s;
            }).ToList();
            sockets.ForEach(s => s.Dispose());
        }
    }

    [Fact]
    public void A_block_that_cannot_fit_the_range_is_refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => PortPlan.FindFreeBlock(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => PortPlan.FindFreeBlock(100, low: 20_000, high: 20_050));
    }
}
