using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;
using SieveQ.Deployment;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// state-transfer-flood: the holder of replica-SQ <see cref="Flooder"/>'s identity key (a compromised replica-SQ)
/// dials every other replica's BFT link as that replica, from the benchmark's own process, and floods each with
/// state-transfer requests: a request for the whole state from instance 0, bodies included, then
/// <see cref="ChunkRequestsPerStateRequest"/> requests for chunks of the newest checkpoint and of made-up ones, in
/// turn, at the attack rate spread over the replicas. The honest replicas' answers go to the real replica-SQ
/// <see cref="Flooder"/>, which asked for nothing and drops them. The links are opened during the warm-up; the
/// attack's actions are the requests queued on them.
/// </summary>
internal sealed class StateTransferFlood(int rate) : Attack
{
    /// <summary>The replica-SQ whose key the attacker holds (the local plan numbers replicas 0 to 3).</summary>
    public const int Flooder = 3;

    public const int ChunkRequestsPerStateRequest = 8;

    private readonly List<PeerConnector> _links = [];
    private IdentityKey? _identity;
    private long _queued;
    private long _notQueued;
    private long _checkpoint;

    public override string Description =>
        $"the holder of replica-SQ {Flooder}'s key dials the other replicas' BFT links as replica {Flooder} and floods them with state requests "
        + $"(the whole state from instance 0, bodies included) and {ChunkRequestsPerStateRequest} checkpoint chunk requests for each, {rate}/s in all";

    public override string Countermeasure =>
        "each replica serves a peer's state requests at most once per StateServeIntervalMs (1 s) and its chunk requests at most "
        + "StateChunksServedPerInterval (32) times per interval, refusals included; the rest are dropped and counted; a reply's bodies are bounded "
        + "by the frame, a chunk by StateChunkBytes";

    public override string? Watched => LocalDeploymentLauncher.ReplicaName(0);

    public override long Applied => Interlocked.Read(ref _queued);

    public override async Task PrepareAsync(AttackTarget target, CancellationToken ct)
    {
        var cluster = target.Context.Cluster;
        _identity = ClusterBootstrap.LoadKey(cluster, Flooder);
        var ring = new KeyRing(cluster);
        foreach (var r in cluster.Replicas.Where(r => r.Id != Flooder))
        {
            var link = new PeerConnector(r.ParseEndpoint(), Flooder, r.Id, _identity, ring, cluster.Links, onMessage: null, NullLogger.Instance);
            _links.Add(link);
            link.Start();
        }
        await FollowCheckpointAsync(target, ct).ConfigureAwait(false);
    }

    /// <summary>The newest checkpoint the replicas hold (from their last decided instance), so that some chunk requests ask for chunks that exist.</summary>
    private async Task FollowCheckpointAsync(AttackTarget target, CancellationToken ct)
    {
        var all = await DeploymentHealth.ProbeAllAsync(target.Config with { Agents = [] }, TimeSpan.FromSeconds(5), ct).ConfigureAwait(false);
        var decided = all.Where(h => h.Component == "replica-sq").Select(h => h.Counters.TryGetValue("last_decided", out var d) ? d : 0).DefaultIfEmpty(0).Max();
        Interlocked.Exchange(ref _checkpoint, decided - (decided % target.Context.Cluster.Protocol.CheckpointInterval));
    }

    public override async Task RunAsync(AttackTarget target, CancellationToken stop)
    {
        var following = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                await Task.Delay(TimeSpan.FromSeconds(1), stop).ConfigureAwait(false);
                await FollowCheckpointAsync(target, stop).ConfigureAwait(false);
            }
        }, CancellationToken.None);
        await FloodAsync(target, stop).ConfigureAwait(false);
        try
        {
            await following.ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // the window ended
        }
    }

    private async Task FloodAsync(AttackTarget target, CancellationToken stop)
    {
        var interval = target.Context.Cluster.Protocol.CheckpointInterval;
        var pace = new AttackPace(rate);
        try
        {
            while (!stop.IsCancellationRequested)
            {
                var (first, count) = await pace.NextAsync(stop).ConfigureAwait(false);
                for (var sent = first; sent < first + count; sent++)
                {
                    var link = _links[(int)(sent % _links.Count)];
                    var round = sent / _links.Count;
                    var checkpoint = Interlocked.Read(ref _checkpoint);
                    BftMessage request = (round % (ChunkRequestsPerStateRequest + 1)) switch
                    {
                        0 => new StateRequest(Flooder, 0, WantBody: true),
                        var k when k % 2 == 0 => new StateChunkRequest(Flooder, checkpoint, (int)(round % 64)),
                        _ => new StateChunkRequest(Flooder, checkpoint + (interval * (1 + (round % 1_000))), (int)(round % 64)),
                    };
                    if (link.Queue.TryEnqueue(OutboundPayload.Encode(request)))
                    {
                        Interlocked.Increment(ref _queued);
                    }
                    else
                    {
                        Interlocked.Increment(ref _notQueued);
                    }
                }
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // the window ended
        }
    }

    public override async Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct)
    {
        var figures = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["attacker links connected (of 3)"] = _links.Count(l => l.IsConnected),
            ["attacker requests not queued (link full)"] = Interlocked.Read(ref _notQueued),
        };
        foreach (var counter in new[]
        {
            "drop.state-request.rate-limited", "drop.state-chunk-request.rate-limited", "state-served.body", "state-served.hashes",
            "state-chunk.served", "state-chunk.refused",
        })
        {
            figures[$"replica core.{counter}"] = await SumCountersAsync(target.Config, "replica-sq", $"core.{counter}", ct).ConfigureAwait(false);
        }
        return figures;
    }

    public override IReadOnlySet<string> Levels { get; } = new HashSet<string>(StringComparer.Ordinal) { "attacker links connected (of 3)" };

    public override async ValueTask DisposeAsync()
    {
        foreach (var l in _links)
        {
            await l.DisposeAsync().ConfigureAwait(false);
        }
        _identity?.Dispose();
    }
}
