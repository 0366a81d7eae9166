using System.Net;
using System.Net.Sockets;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Config;

namespace SieveQ.Bft.Tests.Hosting;

/// <summary>Temporary cluster directories (keys + config) on free loopback ports, removed on dispose.</summary>
internal sealed class TempCluster : IDisposable
{
    public TempCluster(int replicas = 4, int clients = 2, ReplicaConfig? protocol = null, bool durability = false)
    {
        Directory = System.IO.Directory.CreateTempSubdirectory("sieveq-test-").FullName;
        Config = ClusterBootstrap.Create(Directory, replicas, clients, FreePorts(replicas), protocol, durability);
    }

    public string Directory { get; }
    public ClusterConfig Config { get; }

    public static int FreePorts(int count)
    {
        for (var attempt = 0; attempt < 100; attempt++)
        {
            var start = Random.Shared.Next(20_000, 60_000);
            var sockets = new List<Socket>();
            try
            {
                for (var i = 0; i < count; i++)
                {
                    var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                    sockets.Add(s);
                    s.Bind(new IPEndPoint(IPAddress.Loopback, start + i));
                }
                return start;
            }
            catch (SocketException)
            {
                // taken; try another block
            }
            finally
            {
                sockets.ForEach(s => s.Dispose());
            }
        }
        throw new InvalidOperationException("no free ports");
    }

    public void Dispose()
    {
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // a replica may still hold a file for a moment; the temp cleaner gets it
        }
    }
}
