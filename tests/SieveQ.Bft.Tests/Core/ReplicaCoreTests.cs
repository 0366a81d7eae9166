using SieveQ.Bft.Core;

namespace SieveQ.Bft.Tests.Core;

public class ReplicaCoreTests
{
    private static void AssertSameHistory(MiniCluster c, IEnumerable<int> replicas)
    {
        var heads = replicas.Select(i => Convert.ToHexString(c.Apps[i].Head)).Distinct().ToList();
        Assert.Single(heads);
    }

    [Fact]
    public void Orders_requests_from_several_clients_identically_on_all_replicas()
    {
        var c = new MiniCluster();
        for (var i = 0; i < 50; i++)
        {
            c.Submit(1000 + (i % 3), [(byte)i]);
        }
        c.Run(2_000);
        Assert.All(c.Replicas, r => Assert.Equal(0, r!.PendingRequests));
        Assert.All(c.Apps, a => Assert.Equal(50, a.Executed.Count));
        AssertSameHistory(c, [0, 1, 2, 3]);
        Assert.Equal(0, c.Clients.Values.Sum(x => x.OutstandingCount));
    }

    [Fact]
    public void Silent_leader_is_replaced_and_requests_still_complete()
    {
        var c = new MiniCluster();
        c.Silenced.Add(0);
        for (var i = 0; i < 10; i++)
        {
            c.Submit(1000, [(byte)i]);
        }
        c.Run(15_000);
        Assert.All([1, 2, 3], i => Assert.True(c.Replicas[i]!.Regency >= 1));
        Assert.All([1, 2, 3], i => Assert.Equal(10, c.Apps[i].Executed.Count));
        AssertSameHistory(c, [1, 2, 3]);
        Assert.Equal(0, c.Client(1000).OutstandingCount);
    }

    /// <summary>
    /// Regression: a new leader's SYNC took its fresh value from the pending pool by count only, so with
    /// more pending bytes than a batch may hold every replica refused it as oversized, and every later
    /// leader built the same refused SYNC: regency changes forever, nothing decided.
    /// </summary>
    [Fact]
    public void A_new_leader_with_more_pending_bytes_than_one_batch_holds_still_orders_everything()
    {
        var c = new MiniCluster(new ReplicaConfig { MaxBatchBytes = 4_096 });
        c.Silenced.Add(0);
        for (var i = 0; i < 20; i++)
        {
            var payload = new byte[1_000];
            payload[0] = (byte)i;
            c.Submit(1000, payload);
        }
        c.Run(20_000);
        Assert.All([1, 2, 3], i => Assert.Equal(20, c.Apps[i].Executed.Count));
        Assert.All([1, 2, 3], i => Assert.Equal(0, c.Replicas[i]!.Counters["drop.sync.bad-justification"]));
        AssertSameHistory(c, [1, 2, 3]);
    }

    /// <summary>
    /// A request no batch can carry was admitted, proposed alone, refused by every follower as oversized, and the
    /// complaints changed regency for ever. Replicas now refuse it at admission; the others are ordered as usual.
    /// </summary>
    [Fact]
    public void A_request_larger_than_a_batch_holds_is_refused_at_admission_and_stalls_nothing()
    {
        var config = new ReplicaConfig { MaxBatchBytes = 4_096 };
        Assert.Equal(4_096 - ReplicaConfig.BatchHeaderBytes - ReplicaConfig.BatchBytesPerRequest, config.MaxRequestPayloadBytes);
        var c = new MiniCluster(config);
        var tooLarge = new SieveQ.Bft.Protocol.ClientRequest(2000, 1, new byte[config.MaxRequestPayloadBytes + 1]);
        foreach (var r in c.Replicas)
        {
            r!.Step(tooLarge, c.Now);
        }
        c.Submit(1000, [1]);
        c.Submit(1000, new byte[config.MaxRequestPayloadBytes]);
        c.Run(5_000);
        Assert.All(c.Apps, a => Assert.Equal(2, a.Executed.Count));
        Assert.All(c.Replicas, r => Assert.Equal(1, r!.Counters["drop.request.too-large"]));
        Assert.All(c.Replicas, r => Assert.Equal(0, r!.Regency));
    }

    [Fact]
    public void A_client_refuses_a_request_above_the_clusters_limit_instead_of_retrying_it()
    {
        var config = new ReplicaConfig { MaxBatchBytes = 4_096 };
        var client = new SieveQ.Bft.Client.OrderingClient(1000, config, HmacProofs.ClientSigner(1000));
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => client.Submit(new byte[config.MaxRequestPayloadBytes + 1], 0));
        Assert.Contains($"above the cluster's limit of {config.MaxRequestPayloadBytes}", e.Message, StringComparison.Ordinal);
        Assert.Equal(0, client.OutstandingCount);
        Assert.NotNull(client.Submit(new byte[config.MaxRequestPayloadBytes], 0));
    }

    [Fact]
    public void Replayed_request_is_never_executed_twice()
    {
        var c = new MiniCluster();
        c.Submit(1000, [1]);
        c.Run(1_000);
        // The client retransmits the same (client, sequence) long after it executed.
        var replay = new SieveQ.Bft.Protocol.ClientRequest(1000, 1, [1]);
        foreach (var r in c.Replicas)
        {
            r!.Step(replay, c.Now);
        }
        c.Run(1_000);
        Assert.All(c.Apps, a => Assert.Single(a.Executed));
        Assert.True(c.Replicas[0]!.Counters["reply.resent"] >= 1);
    }

    [Fact]
    public void Crashed_follower_catches_up_by_state_transfer_past_checkpoints()
    {
        var c = new MiniCluster(new ReplicaConfig { CheckpointInterval = 4, MaxBatchRequests = 2 });
        c.Crash(3);
        for (var i = 0; i < 40; i++)
        {
            c.Submit(1000 + (i % 2), [(byte)i]);
        }
        c.Run(3_000);
        c.Restart(3);
        for (var i = 0; i < 6; i++)
        {
            c.Submit(1002, [(byte)i]);
        }
        c.Run(8_000);
        Assert.Equal(c.Replicas[0]!.LastDecided, c.Replicas[3]!.LastDecided);
        AssertSameHistory(c, [0, 1, 2, 3]);
        Assert.True(c.Replicas[3]!.Counters["state-transfer.checkpoint-installed"] >= 1);
    }

    [Fact]
    public void Restart_from_durable_records_keeps_regency_and_decisions()
    {
        var c = new MiniCluster(new ReplicaConfig { CheckpointInterval = 4, MaxBatchRequests = 3 });
        for (var i = 0; i < 30; i++)
        {
            c.Submit(1000, [(byte)i]);
        }
        c.Run(2_000);
        var decided = c.Replicas[2]!.LastDecided;
        var regency = c.Replicas[2]!.Regency;
        var head = Convert.ToHexString(c.Apps[2].Head);
        c.Crash(2);
        c.Restart(2);
        Assert.Equal(decided, c.Replicas[2]!.LastDecided);
        Assert.Equal(regency, c.Replicas[2]!.Regency);
        Assert.Equal(head, Convert.ToHexString(c.Apps[2].Head));
    }

    [Fact]
    public void Full_cluster_restart_keeps_every_decision_and_makes_progress_in_a_later_regency()
    {
        var c = new MiniCluster(new ReplicaConfig { CheckpointInterval = 4, MaxBatchRequests = 3 });
        for (var i = 0; i < 20; i++)
        {
            c.Submit(1000, [(byte)i]);
        }
        c.Run(2_000);
        var heads = c.Apps.Select(a => Convert.ToHexString(a.Head)).ToArray();
        var decided = c.Replicas.Select(r => r!.LastDecided).ToArray();
        for (var i = 0; i < 4; i++)
        {
            c.Crash(i);
        }
        for (var i = 0; i < 4; i++)
        {
            c.Restart(i);
            Assert.Equal(heads[i], Convert.ToHexString(c.Apps[i].Head));
            Assert.Equal(decided[i], c.Replicas[i]!.LastDecided);
        }
        for (var i = 0; i < 5; i++)
        {
            c.Submit(1001, [(byte)i]);
        }
        c.Run(20_000);
        Assert.Equal(0, c.Client(1001).OutstandingCount);
        Assert.All(c.Replicas, r => Assert.True(r!.LastDecided > decided.Max()));
        Assert.All(c.Replicas, r => Assert.True(r!.Regency >= 1, "recovered replicas must not write in the regency they recovered into"));
        AssertSameHistory(c, [0, 1, 2, 3]);
    }
}
