using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A Byzantine replica-SQ (the test holds replica 3's real key and links; the process itself is killed)
/// puts requests in the pre-SQs' names on the replica links. None may be ordered: the honest replicas
/// refuse them by the pre-SQ's proof, suspect no pre-SQ and no sender, and real traffic then flows as
/// if nothing had happened.
/// </summary>
public sealed class ByzantineReplicaTests(ITestOutputHelper output)
{
    private const int PerSender = 1_000;
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(150);

    [Fact]
    public async Task Requests_a_replica_makes_up_in_a_pre_sqs_name_are_refused_and_no_honest_party_is_suspected()
    {
        await using var d = await SieveDeployment.StartAsync();
        const int Forger = 3;
        await d.KillReplicaAsync(Forger);
        await using var forger = new ForgingReplica(d.Context, Forger);
        await forger.WaitConnectedAsync(TimeSpan.FromSeconds(30));
        var honest = d.Config.Replicas.Select(r => r.Id).Where(id => id != Forger).ToList();

        // Both pre-SQs' next numbers (so the real batches would be skipped if these were taken) and far ahead.
        var forged = new List<SieveQ.Bft.Protocol.ClientRequest>();
        foreach (var preSq in d.PreSqIds)
        {
            forged.AddRange(ForgingReplica.Forge(preSq, firstSequence: 1, count: 64, sender: 1, items: 8));
            forged.AddRange(ForgingReplica.Forge(preSq, firstSequence: 5_000, count: 64, sender: 2, items: 8));
        }
        forger.Forward(forged, perForward: 1);  // one per FORWARD: a refused message counts once, at its first bad request

        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        foreach (var id in honest)
        {
            while ((await d.ReplicaHealthAsync(id)).Counters.GetValueOrDefault("requests.bad_proof") < forged.Count)
            {
                Assert.True(DateTime.UtcNow < deadline, $"replica {id} did not refuse every forged request: {await d.DescribeAsync()}");
                await Task.Delay(200);
            }
        }

        var run = await TwoSenderRun.RunAsync(d, output, PerSender, Bound);
        run.Log.AssertExactlyOnceInOrder(new Dictionary<int, int> { [1] = PerSender, [2] = PerSender });
        foreach (var id in honest)
        {
            var h = await d.ReplicaHealthAsync(id);
            output.WriteLine($"replica {id}: bad_proof={h.Counters["requests.bad_proof"]} processed={h.Counters["processed"]}");
            // Suspicion from the senders' loss reports (an honest run's timing can raise a little) is another
            // matter; what forged requests would leave is quarantine and drops for bad signatures or malformed items.
            foreach (var preSq in d.PreSqIds)
            {
                Assert.Equal(0, h.Counters[$"quarantined.pre_sq.{preSq}"]);
            }
            Assert.Equal(0, h.Counters["quarantined.senders"]);
            Assert.DoesNotContain(h.Counters, kv => kv.Key.StartsWith("drop.", StringComparison.Ordinal)
                && (kv.Key.EndsWith("BadSignature", StringComparison.Ordinal) || kv.Key.EndsWith("Malformed", StringComparison.Ordinal)) && kv.Value > 0);
        }
        d.Passed = true;
    }
}
