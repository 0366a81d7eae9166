using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Deployment;

namespace SieveQ.Sdk.Tests.Fakes;

/// <summary>
/// A real local deployment (keys, enrolment, cluster file: f = 1, pre-SQs 4 and 5, senders 1 and 2,
/// receiver 100) whose pre-SQ and replica-SQ endpoints are in-process fakes over real sockets.
/// </summary>
internal sealed class SieveWorld : IAsyncDisposable
{
    public const int Receiver = 100;

    private readonly Dictionary<int, ECDsa> _senderKeys = [];
    private readonly List<PartyKeys> _keys = [];

    private SieveWorld(string directory, DeploymentContext ctx, FakeSieveServer server)
    {
        Directory = directory;
        Context = ctx;
        Server = server;
    }

    public string Directory { get; }
    public DeploymentContext Context { get; }
    public FakeSieveServer Server { get; }
    public FakeCluster Cluster => Server.Cluster;
    public IReadOnlyList<int> PreSqIds => Context.Config.PreSqs.Select(p => p.Id).Order().ToList();

    public string StateDir(string name) => Path.Combine(Directory, "state", name);

    public static async Task<SieveWorld> StartAsync()
    {
        var dir = Path.Combine(Path.GetTempPath(), "sieveq-sdk-" + Guid.NewGuid().ToString("N")[..10]);
        var initial = DeploymentBootstrap.Create(dir, new LocalDeploymentSpec { Durability = false, Senders = [1, 2], Receivers = [Receiver], Tls = false });
        var provisional = DeploymentContext.Load(dir);
        var cluster = new FakeCluster(provisional);
        var server = await FakeSieveServer.StartAsync(provisional, initial.Replicas.Select(r => r.Id).ToList(), initial.PreSqs.Select(p => p.Id).ToList(), cluster);
        var config = initial with
        {
            Replicas = initial.Replicas.Select(r => r with { ApiUrl = server.ReplicaUrls[r.Id].ToString().TrimEnd('/') }).ToList(),
            PreSqs = initial.PreSqs.Select(p => p with { Url = server.PreSqUrls[p.Id].ToString().TrimEnd('/') }).ToList(),
        };
        DeploymentFile.Save(config, Path.Combine(dir, DeploymentFile.FileName));
        return new SieveWorld(dir, DeploymentContext.Load(dir), server);
    }

    /// <summary>Sender messages as a sender-SQ would sign them (one signature each), for feeding the cluster directly.</summary>
    public byte[] SignedMessage(int sender, long seq, int receiver, byte[] data)
    {
        if (!_senderKeys.TryGetValue(sender, out var key))
        {
            var keys = Context.Keys(PartyRole.Sender, sender);
            _keys.Add(keys);
            key = keys.Signing!;
            _senderKeys[sender] = key;
        }
        return SenderMessageCodec.SignSingle(SenderMessageCodec.EncodeSignedRegion(sender, seq, receiver, data), key);
    }

    /// <summary>Orders <paramref name="count"/> messages per sender, several to an ordering request, as a pre-SQ would.</summary>
    public Dictionary<(int Sender, long Seq), byte[]> Publish(int[] senders, long firstSeq, int count, int perRequest = 7)
    {
        var truth = new Dictionary<(int, long), byte[]>();
        var items = new List<ReadOnlyMemory<byte>>();
        for (var i = 0; i < count; i++)
        {
            foreach (var s in senders)
            {
                var seq = firstSeq + i;
                var data = System.Text.Encoding.UTF8.GetBytes($"sender {s} message {seq}");
                truth[(s, seq)] = data;
                items.Add(SignedMessage(s, seq, Receiver, data));
                if (items.Count == perRequest)
                {
                    Cluster.Order(PreSqIds[0], [.. items]);
                    items.Clear();
                }
            }
        }
        if (items.Count > 0)
        {
            Cluster.Order(PreSqIds[0], [.. items]);
        }
        return truth;
    }

    public async ValueTask DisposeAsync()
    {
        await Server.DisposeAsync();
        Cluster.Dispose();
        foreach (var k in _keys)
        {
            k.Dispose();
        }
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
