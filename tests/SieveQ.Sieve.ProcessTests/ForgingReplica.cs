using System.Security.Cryptography;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Deployment;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A replica-SQ taken over by an attacker: it holds that replica's real key and speaks the real BFT links to
/// the other replicas, but instead of ordering it sends FORWARDs full of requests made up in a pre-SQ's name,
/// each carrying sender messages whose signatures do not verify. Ordered, those would count against the
/// pre-SQ and its senders until both were quarantined.
/// </summary>
internal sealed class ForgingReplica : IAsyncDisposable
{
    private readonly List<PeerConnector> _peers = [];
    private readonly IdentityKey _identity;

    public ForgingReplica(DeploymentContext deployment, int impersonated)
    {
        var cluster = deployment.Cluster;
        Self = impersonated;
        _identity = ClusterBootstrap.LoadKey(cluster, impersonated);
        var ring = new KeyRing(cluster);
        foreach (var r in cluster.Replicas.Where(r => r.Id != impersonated))
        {
            var peer = new PeerConnector(r.ParseEndpoint(), impersonated, r.Id, _identity, ring, cluster.Links, onMessage: null, NullLogger.Instance);
            _peers.Add(peer);
            peer.Start();
        }
    }

    public int Self { get; }
    public int Connected => _peers.Count(p => p.IsConnected);

    public async Task WaitConnectedAsync(TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (Connected < _peers.Count)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"the forging replica reached {Connected} of {_peers.Count} replicas");
            }
            await Task.Delay(50);
        }
    }

    /// <summary>Requests in <paramref name="preSq"/>'s name, numbered from <paramref name="firstSequence"/>, each with <paramref name="items"/> badly signed messages from <paramref name="sender"/>.</summary>
    public static List<ClientRequest> Forge(int preSq, long firstSequence, int count, int sender, int items)
    {
        using var wrongKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var requests = new List<ClientRequest>(count);
        for (var i = 0; i < count; i++)
        {
            var seq = firstSequence + i;
            var messages = Enumerable.Range(0, items)
                .Select(k => (ReadOnlyMemory<byte>)SenderMessageCodec.SignSingle(
                    SenderMessageCodec.EncodeSignedRegion(sender, (seq * items) + k + 1, SieveDeployment.ReceiverId, "forged"u8), wrongKey))
                .ToList();
            requests.Add(new ClientRequest(preSq, seq, OrderingRequestCodec.Encode(preSq, messages)) { Proof = RandomNumberGenerator.GetBytes(64) });
        }
        return requests;
    }

    /// <summary>Sends the requests to every replica it reaches, as FORWARDs of <paramref name="perForward"/>.</summary>
    public void Forward(IReadOnlyList<ClientRequest> requests, int perForward = 16)
    {
        foreach (var chunk in requests.Chunk(perForward))
        {
            var payload = OutboundPayload.Encode(new Forward(Self, chunk), references: _peers.Count);
            foreach (var p in _peers)
            {
                p.Queue.TryEnqueueDeferred(payload);
            }
        }
        foreach (var p in _peers)
        {
            p.Queue.Kick();
        }
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var p in _peers)
        {
            await p.DisposeAsync();
        }
        _identity.Dispose();
    }
}
