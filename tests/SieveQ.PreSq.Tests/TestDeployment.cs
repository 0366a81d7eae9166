using System.Net;
using System.Net.Sockets;
using SieveQ.Deployment;

namespace SieveQ.PreSq.Tests;

/// <summary>A fresh local deployment in a temporary directory, on loopback ports that were free a moment ago.</summary>
internal sealed class TestDeployment : IDisposable
{
    public static readonly int[] Senders = [1, 2, 3, 4, 5, 6, 7, 8, 9];
    public const int Receiver = 100;

    public TestDeployment()
    {
        Directory = System.IO.Directory.CreateTempSubdirectory("sieveq-presq-test-").FullName;
        DeploymentBootstrap.Create(Directory, new LocalDeploymentSpec
        {
            F = 1,
            PreSqs = 2,
            Senders = Senders,
            Receivers = [Receiver],
            BasePort = FreeBasePort(),
            Durability = false,
        });
        Context = DeploymentContext.Load(Directory);
    }

    public string Directory { get; }

    public DeploymentContext Context { get; }

    /// <summary>Replica links at base+0..3, replica APIs at base+100..103, pre-SQs at base+200..201 (DeploymentBootstrap's layout).</summary>
    private static int FreeBasePort()
    {
        int[] offsets = [0, 1, 2, 3, 100, 101, 102, 103, 200, 201];
        for (var attempt = 0; attempt < 100; attempt++)
        {
            var start = Random.Shared.Next(20_000, 60_000);
            var sockets = new List<Socket>();
            try
            {
                foreach (var o in offsets)
                {
                    var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                    sockets.Add(s);
                    s.Bind(new IPEndPoint(IPAddress.Loopback, start + o));
                }
                return start;
            }
            catch (SocketException)
            {
                // taken; try another block
            }
            finally
            {
                foreach (var s in sockets)
                {
                    s.Dispose();
                }
            }
        }
        throw new InvalidOperationException("no free port block on loopback");
    }

    public void Dispose()
    {
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // a replica may still hold a file for a moment; the OS cleans temp eventually
        }
    }
}
