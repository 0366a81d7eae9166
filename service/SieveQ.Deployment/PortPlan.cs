using System.Net;
using System.Net.Sockets;

namespace SieveQ.Deployment;

/// <summary>Finds a base port whose derived ports (see <see cref="DeploymentBootstrap"/>) are all free on loopback right now.</summary>
public static class PortPlan
{
    public static IEnumerable<int> PortsFor(int basePort, int replicas, int preSqs) =>
        Enumerable.Range(basePort, replicas)
            .Concat(Enumerable.Range(basePort + 100, replicas))
            .Concat(Enumerable.Range(basePort + 200, preSqs));

    /// <remarks>
    /// The default range stays below the kernels' ephemeral ranges (Linux 32768-60999, Windows from 49152):
    /// a port found free there can be taken by any outgoing connection before the component binds it, which
    /// made a test deployment's replica fail with "address already in use".
    /// </remarks>
    public static int FindFreeBase(int replicas, int preSqs, int low = 20_000, int high = 32_000) =>
        Find(start => PortsFor(start, replicas, preSqs), low, high - 300);

    /// <summary><paramref name="count"/> consecutive ports free on loopback right now, below the ephemeral ranges as <see cref="FindFreeBase"/>.</summary>
    public static int FindFreeBlock(int count, int low = 20_000, int high = 32_000)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, high - low - 1);
        return Find(start => Enumerable.Range(start, count), low, high - count);
    }

    private static int Find(Func<int, IEnumerable<int>> ports, int low, int highestStart)
    {
        for (var attempt = 0; attempt < 100; attempt++)
        {
            var start = Random.Shared.Next(low, highestStart);
            if (ports(start).All(IsFree))
            {
                return start;
            }
        }
        throw new DeploymentException("no free block of loopback ports found");
    }

    private static bool IsFree(int port)
    {
        try
        {
            using var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            s.Bind(new IPEndPoint(IPAddress.Loopback, port));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
