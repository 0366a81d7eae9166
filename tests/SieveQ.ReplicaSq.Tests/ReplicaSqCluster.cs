using System.Collections.Concurrent;
using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Sieve.Envelope;
using SieveQ.Deployment;
using SieveQ.ReplicaSq;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>
/// A fresh local deployment (f = 1: four replica-SQs, two pre-SQ identities, senders 1-4, receiver 100)
/// with all four replica-SQ hosts running in this process on loopback, and an ordering client that
/// acts as pre-SQ <see cref="PreSq"/>. Shared by the tests of one class: starting it costs a few seconds.
/// </summary>
public class ReplicaSqCluster : IAsyncLifetime
{
    public const int Receiver = 100;
    public static readonly int[] Senders = [1, 2, 3, 4];

    private readonly ConcurrentDictionary<(PartyRole, int), PartyKeys> _keys = new();
    private readonly ConcurrentDictionary<int, long> _seq = new();
    private readonly List<ReplicaSqHost> _hosts = [];
    private IdentityKey? _preSqIdentity;

    public string Directory { get; } = System.IO.Directory.CreateTempSubdirectory("sieveq-replicasq-test-").FullName;
    public DeploymentContext Context { get; private set; } = null!;
    public IReadOnlyList<ReplicaSqHost> Hosts => _hosts;
    public BftClient Ordering { get; private set; } = null!;
    public int F => Context.Config.F;
    public int PreSq => Context.Config.PreSqs[0].Id;

    /// <summary>Short retransmission interval, so a test can watch the periodic catch-up happen.</summary>
    public static readonly ReplicaSqHostOptions Options = new()
    {
        RetransmitAfter = TimeSpan.FromMilliseconds(600),
        RetransmitTick = TimeSpan.FromMilliseconds(200),
    };

    /// <summary>The replica-SQ hosts' options; a fixture may tighten them.</summary>
    protected virtual ReplicaSqHostOptions HostOptions => Options;

    /// <summary>An initial rule set: the replicas then run signed rule sets (administrator key in keys/administrator.pem).</summary>
    protected virtual byte[]? RuleSet => null;

    /// <summary>A replica-SQ's receiver output gate (<see cref="IReceiverOutputGate"/>); none, as in the product, unless a fixture sets one.</summary>
    protected virtual IReceiverOutputGate? ReceiverGate(int replica) => null;

    public async Task InitializeAsync()
    {
        DeploymentBootstrap.Create(Directory, new LocalDeploymentSpec
        {
            F = 1,
            PreSqs = 2,
            Senders = Senders,
            Receivers = [Receiver],
            BasePort = PortPlan.FindFreeBase(4, 2),
            Durability = false,
            RuleSet = RuleSet,
        });
        Context = DeploymentContext.Load(Directory);
        foreach (var r in Context.Config.Replicas)
        {
            var host = ReplicaSqHost.Create(Context, r.Id, HostOptions, receiverGate: ReceiverGate(r.Id));
            _hosts.Add(host);
            await host.StartAsync();
        }
        _preSqIdentity = ClusterBootstrap.LoadKey(Context.Cluster, PreSq);
        Ordering = new BftClient(Context.Cluster, PreSq, _preSqIdentity);
        Assert.True(await Ordering.WaitConnectedAsync(Context.Config.N, TimeSpan.FromSeconds(15)), "the pre-SQ's ordering client did not reach every replica");
    }

    public PartyKeys Keys(PartyRole role, int id) => _keys.GetOrAdd((role, id), k => Context.Keys(k.Item1, k.Item2));

    public Uri ApiUrl(int replica) => new(Context.Config.Replica(replica).ApiUrl);

    public SieveQ.Transport.Tls.TlsPin? Pin(int replica) => Context.Config.Replica(replica).Pin();

    /// <summary>The next sequence numbers of a sender (they start at 1 and never repeat).</summary>
    public long NextSeq(int sender) => _seq.AddOrUpdate(sender, 1, (_, s) => s + 1);

    public long LastSeq(int sender) => _seq.TryGetValue(sender, out var s) ? s : 0;

    /// <summary>A sender message with its own signature, as a sender-SQ would build it.</summary>
    public byte[] Message(int sender, long seq, byte[] data) =>
        SenderMessageCodec.SignSingle(SenderMessageCodec.EncodeSignedRegion(sender, seq, Receiver, data), Keys(PartyRole.Sender, sender).Signing!);

    /// <summary>Orders the items as one ordering request of the pre-SQ; returns the agreed execution result.</summary>
    public async Task<ExecuteResult> SubmitAsync(params byte[][] items)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var done = await Ordering.SubmitAsync(OrderingRequestCodec.Encode(PreSq, items.Select(i => (ReadOnlyMemory<byte>)i).ToList()), cts.Token);
        return ExecuteResultCodec.Decode(done.Result);
    }

    /// <summary>Orders one command alone in a request of the pre-SQ; returns the agreed result bytes.</summary>
    public async Task<ReadOnlyMemory<byte>> SubmitRawAsync(byte[] command)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var done = await Ordering.SubmitAsync(OrderingRequestCodec.Encode(PreSq, [command]), cts.Token);
        return done.Result;
    }

    public byte[] ReceiverSubscription(int replica, long? timeMs = null) =>
        SubscriptionCodec.Encode(StructureKind.ReceiverSubscription, Receiver, replica, timeMs ?? DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
            Keys(PartyRole.Receiver, Receiver).Signing!);

    public byte[] PreSqSubscription(int replica) =>
        SubscriptionCodec.Encode(StructureKind.PreSqSubscription, PreSq, replica, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), _preSqIdentity!.Key);

    public static async Task EventuallyAsync(Func<bool> condition, string what, int timeoutMs = 10_000)
    {
        var deadline = Environment.TickCount64 + timeoutMs;
        while (!condition())
        {
            Assert.True(Environment.TickCount64 < deadline, $"timed out waiting for: {what}");
            await Task.Delay(20);
        }
    }

    public async Task DisposeAsync()
    {
        if (Ordering is not null)
        {
            await Ordering.DisposeAsync();
        }
        foreach (var h in _hosts)
        {
            await h.DisposeAsync();
        }
        _preSqIdentity?.Dispose();
        foreach (var k in _keys.Values)
        {
            k.Dispose();
        }
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // a file may still be held for a moment; temp is cleaned eventually
        }
    }
}
