using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>
/// A checkpoint travels in chunks checked against a manifest f+1 replicas vouch for: a state larger than one frame
/// reaches a lagging replica, a Byzantine server's bad chunks are refused and fetched elsewhere, and neither side
/// holds or serves more than its bounds.
/// </summary>
public class ChunkedStateTransferTests
{
    /// <summary>
    /// Replica 3 misses several checkpoint intervals (the others' logs reach back one interval only), so it can
    /// catch up only by a checkpoint.
    /// </summary>
    private static void LeaveReplica3Behind(MiniCluster c, int requests)
    {
        c.Silenced.Add(3);
        for (var i = 0; i < requests; i++)
        {
            c.Submit(1000, [(byte)i]);
            c.Run(60);
        }
        Assert.Equal(0, c.Replicas[3]!.LastDecided);
        c.Silenced.Remove(3);
    }

    private static void AssertCaughtUpByCheckpoint(MiniCluster c)
    {
        var lagging = c.Replicas[3]!;
        Assert.True(lagging.Counters["state-transfer.checkpoint-installed"] >= 1, Counters(lagging));
        Assert.Equal(c.Replicas[0]!.LastDecided, lagging.LastDecided);
        Assert.Equal(c.Apps[0].Head, c.Apps[3].Head);
    }

    private static string Counters(ReplicaCore core) => string.Join(", ", core.Counters.Snapshot().Select(kv => $"{kv.Key}={kv.Value}"));

    [Fact]
    public void A_checkpoint_larger_than_one_frame_reaches_a_lagging_replica_in_chunks_every_frame_within_the_limit()
    {
        var config = new ReplicaConfig { CheckpointInterval = 4 };
        var padding = WireLimits.MaxFrameBytes + (2 * config.StateChunkBytes);
        var c = new MiniCluster(config, snapshotPaddingBytes: padding) { ThroughCodec = true };
        LeaveReplica3Behind(c, requests: 13);
        c.Submit(1000, [200]);
        c.Run(3_000);

        AssertCaughtUpByCheckpoint(c);
        var lagging = c.Replicas[3]!;
        Assert.True(lagging.Counters["state-transfer.chunk-fetched"] > padding / config.StateChunkBytes, Counters(lagging));
        Assert.InRange(c.LargestFrame, 1, WireLimits.MaxFrameBytes);
    }

    [Fact]
    public void A_Byzantine_servers_bad_chunks_are_refused_on_arrival_and_fetched_from_another_replica()
    {
        var config = new ReplicaConfig { CheckpointInterval = 4, StateChunkBytes = WireLimits.MinStateChunkBytes };
        var c = new MiniCluster(config, snapshotPaddingBytes: 8 * 1024);
        var corrupted = 0;
        c.Tamper = (from, to, m) =>
        {
            if (from != 0 || m is not StateChunk { Held: true } chunk)
            {
                return m;
            }
            corrupted++;
            var data = chunk.Data.ToArray();
            data[corrupted % data.Length] ^= 0x01;
            return chunk with { Data = data };
        };
        LeaveReplica3Behind(c, requests: 13);
        c.Submit(1000, [200]);
        c.Run(3_000);

        AssertCaughtUpByCheckpoint(c);
        var lagging = c.Replicas[3]!;
        Assert.True(corrupted >= 1, "replica 0 was never asked for a chunk");
        Assert.Equal(corrupted, lagging.Counters["drop.state-chunk.bad"]);
        Assert.Equal(0, lagging.Counters["drop.state-chunk.state-hash-mismatch"]);
        // Once a chunk from replica 0 was bad, 0 is asked nothing more in that fetch: at most what was in flight.
        Assert.InRange(corrupted, 1, config.StateChunksInFlight);
    }

    [Fact]
    public void A_requester_never_has_more_chunks_outstanding_than_its_bound_and_drops_chunks_it_did_not_ask_for()
    {
        var config = new ReplicaConfig { CheckpointInterval = 4, StateChunkBytes = WireLimits.MinStateChunkBytes, StateChunksInFlight = 3 };
        var c = new MiniCluster(config, snapshotPaddingBytes: 8 * 1024);
        LeaveReplica3Behind(c, requests: 13);
        var outstanding = new HashSet<(int Server, int Index)>();
        var most = 0;
        c.Tamper = (from, to, m) =>
        {
            if (from == 3 && m is StateChunkRequest q)
            {
                outstanding.Add((to, q.Index));
                most = Math.Max(most, outstanding.Count);
            }
            return m;
        };
        c.Delivering = (to, m) =>
        {
            if (to == 3 && m is StateChunk chunk)
            {
                outstanding.Remove((chunk.From, chunk.Index));
            }
        };
        for (var i = 0; i < 50; i++)
        {
            c.Inject(3, new StateChunk(1, 12, i, Held: true, new byte[config.StateChunkBytes]));
        }
        c.Submit(1000, [200]);
        c.Run(3_000);

        AssertCaughtUpByCheckpoint(c);
        Assert.InRange(most, 1, config.StateChunksInFlight);
        Assert.True(c.Replicas[3]!.Counters["drop.state-chunk.unsolicited"] >= 50, Counters(c.Replicas[3]!));
    }

    [Fact]
    public void A_server_answers_a_peers_chunk_requests_up_to_its_bound_per_interval_and_refuses_checkpoints_it_does_not_hold()
    {
        var config = new ReplicaConfig { CheckpointInterval = 4, StateChunkBytes = WireLimits.MinStateChunkBytes };
        var c = new MiniCluster(config, snapshotPaddingBytes: 4 * 1024);
        for (var i = 0; i < 5; i++)
        {
            c.Submit(1000, [(byte)i]);
            c.Run(60);
        }
        var server = c.Replicas[0]!;
        Assert.Equal(4, server.LastCheckpointId);
        server.DrainOutputs();

        server.Step(new StateChunkRequest(1, 3, 0), c.Now);
        var refusal = Assert.IsType<StateChunk>(Assert.Single(server.DrainOutputs().OfType<SendTo>()).Message);
        Assert.False(refusal.Held);

        for (var i = 0; i < 100; i++)
        {
            server.Step(new StateChunkRequest(1, 4, i % 8), c.Now);
        }
        var served = server.DrainOutputs().OfType<SendTo>().Select(s => s.Message).OfType<StateChunk>().ToList();
        Assert.Equal(config.StateChunksServedPerInterval - 1, served.Count);
        Assert.All(served, s => Assert.True(s.Held));
        Assert.Equal(100 - served.Count, server.Counters["drop.state-chunk-request.rate-limited"]);

        server.Step(new StateChunkRequest(1, 4, 0), c.Now + config.StateServeIntervalMs);
        Assert.Single(server.DrainOutputs().OfType<SendTo>());
    }

    [Fact]
    public void A_server_still_serves_its_previous_checkpoint_so_a_fetch_survives_its_sources_moving_on_once()
    {
        var config = new ReplicaConfig { CheckpointInterval = 4, StateChunkBytes = WireLimits.MinStateChunkBytes };
        var c = new MiniCluster(config, snapshotPaddingBytes: 1024);
        for (var i = 0; i < 13; i++)
        {
            c.Submit(1000, [(byte)i]);
            c.Run(60);
        }
        var server = c.Replicas[0]!;
        Assert.Equal(12, server.LastCheckpointId);
        server.DrainOutputs();

        StateChunk Ask(long checkpoint)
        {
            server.Step(new StateChunkRequest(1, checkpoint, 1), c.Now);
            return Assert.IsType<StateChunk>(Assert.Single(server.DrainOutputs().OfType<SendTo>()).Message);
        }

        Assert.True(Ask(12).Held);
        Assert.True(Ask(8).Held);
        Assert.False(Ask(4).Held);
        Assert.Equal(WireLimits.MinStateChunkBytes, Ask(8).Data.Length);
    }
}
