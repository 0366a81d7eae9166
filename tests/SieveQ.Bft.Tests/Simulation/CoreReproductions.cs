using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Simulation;

/// <summary>
/// Hand-scripted schedules for the narrow interleavings random seeds rarely hit, message by
/// message: regression tests for core bugs found while building the simulator.
/// </summary>
public class CoreReproductions
{
    private static readonly ReplicaConfig Config = new() { N = 4 };

    [Fact]
    public void A_cluster_restart_between_regency_install_and_sync_must_not_decide_a_second_value()
    {
        var c = new ScriptedCluster(Config);
        var r1 = new ClientRequest(1000, 1, [1]);
        var r2 = new ClientRequest(1000, 2, [2]);

        // Instance 1 in regency 0: replica 0 proposes; 0, 1, 2 prepare; only 0 collects the ACCEPTs and decides.
        c.Step(0, r1, now: 10);
        c.Deliver(from: 0, to: [1, 2], now: 11, only: m => m is Propose or Write);
        c.Deliver(from: 1, to: [0, 2], now: 12, only: m => m is Write);
        c.Deliver(from: 2, to: [0, 1], now: 12, only: m => m is Write);
        c.Deliver(from: 1, to: [0], now: 14, only: m => m is Accept);
        c.Deliver(from: 2, to: [0], now: 14, only: m => m is Accept);
        Assert.Equal(1, c.Cores[0].LastDecided);
        Assert.Equal(0, c.Cores[1].LastDecided);

        // 1, 2, 3 stop hearing the leader, complain and install regency 1 (led by replica 1).
        var late = Config.LeaderSilenceTimeoutMs + 100;
        foreach (var r in new[] { 1, 2, 3 })
        {
            c.Tick(r, late);
        }
        foreach (var r in new[] { 1, 2, 3 })
        {
            c.Deliver(from: r, to: [1, 2, 3], now: late + 1, only: m => m is Stop);
        }
        Assert.All(new[] { 1, 2, 3 }, r => Assert.Equal(1, c.Cores[r].Regency));

        // Before any SYNC, replicas 1, 2, 3 lose power and come back from their disks.
        foreach (var r in new[] { 1, 2, 3 })
        {
            c.Restart(r, late + 10);
        }

        // A client request reaches the leader of regency 1 and the followers.
        foreach (var r in new[] { 1, 2, 3 })
        {
            c.Step(r, r2, late + 20);
        }
        for (var i = 0; i < 3; i++)
        {
            foreach (var r in new[] { 1, 2, 3 })
            {
                c.Deliver(from: r, to: [1, 2, 3], now: late + 21 + i);
            }
        }

        // Instance 1 was decided by replica 0; no other value may ever be decided for it.
        foreach (var (replica, cid, hash) in c.Decisions)
        {
            Assert.True(cid != 1 || hash == c.Decisions.First(d => d.Replica == 0 && d.Cid == 1).Hash,
                $"replica {replica} decided {hash} for instance 1, replica 0 decided another value");
        }
    }

    /// <summary>
    /// Found by `sieveq sim --seed 1072 --faults all` (before the core's fixes of 22 Nov moved that
    /// seed's trace): a replica cut off during a regency change asks for the SYNC later, and the
    /// leader re-sends the one it built then. Its fresh value carries the timestamp of that moment,
    /// which the late replica judges against its clock now, so it refuses the SYNC forever
    /// (sync.fault.fresh-value-timestamp-skew) and never joins. With the old leader silent the
    /// other two cannot reach a quorum in the new regency; in that seed this was a permanent stall.
    /// Fixed: a SYNC's fresh value is now judged only against the decided timestamp and the future side
    /// of the skew window (ReplicaCore.JudgeProposal, resentSync).
    /// </summary>
    [Fact]
    public void A_replica_that_missed_a_regency_change_can_still_join_it_later()
    {
        var c = new ScriptedCluster(Config);
        var silence = Config.LeaderSilenceTimeoutMs;

        // Replicas 1 and 2 stop hearing leader 0; 0 joins their complaint; 3 is cut off throughout.
        c.Tick(1, silence + 1);
        c.Tick(2, silence + 1);
        c.Deliver(from: 1, to: [0, 2], now: silence + 2, only: m => m is Stop);
        c.Deliver(from: 2, to: [0, 1], now: silence + 2, only: m => m is Stop);
        c.Deliver(from: 0, to: [1, 2], now: silence + 3, only: m => m is Stop);
        c.Deliver(from: 0, to: [1], now: silence + 4, only: m => m is StopData);
        c.Deliver(from: 2, to: [1], now: silence + 4, only: m => m is StopData);
        c.Deliver(from: 1, to: [0, 2], now: silence + 5, only: m => m is Sync);
        Assert.All(new[] { 0, 1, 2 }, r => Assert.Equal((1, ReplicaMode.Normal), (c.Cores[r].Regency, c.Cores[r].Mode)));

        // Much later (well past the timestamp skew) replica 3 is reachable again and complains.
        var later = silence + 5 + (4 * Config.TimestampSkewMs);
        c.Tick(3, later);
        c.Deliver(from: 3, to: [1], now: later + 1, only: m => m is Stop);
        c.Deliver(from: 1, to: [3], now: later + 2, only: m => m is Sync);
        Assert.True(c.Cores[3].Regency == 1, string.Join(", ", c.Cores[3].Counters.Snapshot().Select(kv => $"{kv.Key}={kv.Value}")));
    }

    /// <summary>Four real cores, a per-replica outbox and disk, and nothing delivered unless the script says so.</summary>
    private sealed class ScriptedCluster
    {
        private readonly ReplicaConfig _config;
        private readonly List<(int To, BftMessage Message)>[] _outbox;
        private readonly List<DurableRecord>[] _disk;

        public ScriptedCluster(ReplicaConfig config)
        {
            _config = config;
            _outbox = Enumerable.Range(0, config.N).Select(_ => new List<(int, BftMessage)>()).ToArray();
            _disk = Enumerable.Range(0, config.N).Select(_ => new List<DurableRecord>()).ToArray();
            Cores = Enumerable.Range(0, config.N).Select(i => new ReplicaCore(config, i, new CountingApp(), new KeySigner(i))).ToArray();
        }

        public ReplicaCore[] Cores { get; }
        public List<(int Replica, long Cid, Digest Hash)> Decisions { get; } = [];

        public void Step(int replica, BftMessage m, long now)
        {
            Cores[replica].Step(m, now);
            Drain(replica);
        }

        public void Tick(int replica, long now)
        {
            Cores[replica].Tick(now);
            Drain(replica);
        }

        public void Restart(int replica, long now)
        {
            _outbox[replica].Clear();
            Cores[replica] = new ReplicaCore(_config, replica, new CountingApp(), new KeySigner(replica), _disk[replica].ToList(), now);
            Drain(replica);
        }

        /// <summary>Delivers what <paramref name="from"/> has queued for <paramref name="to"/> (of one kind); the rest stays queued, maybe forever.</summary>
        public void Deliver(int from, int[] to, long now, Func<BftMessage, bool>? only = null)
        {
            var batch = _outbox[from].Where(x => to.Contains(x.To) && (only is null || only(x.Message))).ToList();
            _outbox[from].RemoveAll(x => batch.Contains(x));
            foreach (var (dest, m) in batch)
            {
                Step(dest, m, now);
            }
        }

        private void Drain(int replica)
        {
            foreach (var o in Cores[replica].DrainOutputs())
            {
                switch (o)
                {
                    case SendTo s when s.To < _config.N:
                        _outbox[replica].Add((s.To, s.Message));
                        break;
                    case SendToReplicas s:
                        for (var r = 0; r < _config.N; r++)
                        {
                            if (r != replica)
                            {
                                _outbox[replica].Add((r, s.Message));
                            }
                        }
                        break;
                    case Persist p:
                        _disk[replica].Add(p.Record);
                        break;
                    case Decided d:
                        Decisions.Add((replica, d.ConsensusId, d.Value.Hash));
                        break;
                }
            }
        }
    }

    private sealed class CountingApp : IReplicatedApplication
    {
        private long _count;

        public IReadOnlyList<byte[]> Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
        {
            _count += requests.Count;
            return requests.Select(_ => BitConverter.GetBytes(_count)).ToArray();
        }

        public byte[] TakeSnapshot() => BitConverter.GetBytes(_count);

        public void RestoreSnapshot(ReadOnlySpan<byte> snapshot) => _count = BitConverter.ToInt64(snapshot);
    }

    private sealed class KeySigner(int replica) : IProofSigner
    {
        public byte[] Sign(ReadOnlySpan<byte> data) => HMACSHA256.HashData(BitConverter.GetBytes(replica), data);
    }
}
