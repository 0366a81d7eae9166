using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// The sieve's tolerance, as real processes on loopback: a lying pre-SQ, a silent pre-SQ, a compromised
/// sender, a replica killed mid-stream and a receiver restarted mid-stream. Every run checks the payloads
/// themselves: whatever the faults, the receiver sees each sender's messages exactly once, in order.
/// </summary>
public sealed class FaultTests(ITestOutputHelper output)
{
    private const int PerSender = 3_000;
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(150);
    private static readonly Dictionary<int, int> Expected = new() { [1] = PerSender, [2] = PerSender };

    /// <summary>
    /// Pre-SQ 4 flips a byte of every message it forwards. Sender 2 starts on it. The replicas refuse
    /// those copies by signature and suspect pre-SQ 4; the sender's retransmissions through pre-SQ 5 get
    /// every message delivered, unaltered.
    /// </summary>
    [Fact]
    public async Task A_tampering_pre_sq_is_refused_by_signature_and_suspected_and_nothing_is_lost()
    {
        var tamperer = new TamperingPreSq();
        await using var d = await SieveDeployment.StartAsync(compromisedPreSqs: new Dictionary<int, SieveQ.PreSq.IPassedMessageStage> { [4] = tamperer });
        var (log, senders, _) = await TwoSenderRun.RunAsync(d, output, PerSender, Bound);
        log.AssertExactlyOnceInOrder(Expected);
        Assert.True(tamperer.Applied > 0, "pre-SQ 4 should have altered messages");
        foreach (var r in d.Config.Replicas)
        {
            var h = await d.ReplicaHealthAsync(r.Id);
            Assert.True(h.Counters.GetValueOrDefault("drop.ReplicaAdmission.BadSignature") > 0, $"replica {r.Id} should refuse altered messages by signature");
            Assert.True(h.Counters.GetValueOrDefault("suspicion.pre_sq.4") > 0 || h.Counters.GetValueOrDefault("quarantined.pre_sq.4") == 1, $"replica {r.Id} should suspect pre-SQ 4");
            Assert.Equal(0, h.Counters.GetValueOrDefault("suspicion.pre_sq.5"));
        }
        Assert.True(senders[1].Stats.Retransmissions > 0);
        d.Passed = true;
    }

    /// <summary>Pre-SQ 4 takes frames and forwards none. Sender 2, assigned to it, times out and goes through pre-SQ 5.</summary>
    [Fact]
    public async Task A_dropping_pre_sq_is_bypassed_by_retransmission_through_the_other()
    {
        var dropper = new DroppingPreSq();
        await using var d = await SieveDeployment.StartAsync(compromisedPreSqs: new Dictionary<int, SieveQ.PreSq.IPassedMessageStage> { [4] = dropper });
        var (log, senders, _) = await TwoSenderRun.RunAsync(d, output, PerSender, Bound);
        log.AssertExactlyOnceInOrder(Expected);
        Assert.True(dropper.Applied > 0);
        Assert.Equal(4, d.PreSqIds.Min());
        Assert.True(senders[1].Stats.Retransmissions > 0, "sender 2 started on the dropping pre-SQ and must have retransmitted");
        d.Passed = true;
    }

    /// <summary>
    /// The leader replica is killed with SIGKILL after the first third of the traffic was ordered; the rest
    /// is sent only then, so it must be ordered under a new regency. Nothing is lost or delivered twice.
    /// </summary>
    [Fact]
    public async Task Killing_the_leader_replica_mid_stream_loses_and_duplicates_nothing()
    {
        await using var d = await SieveDeployment.StartAsync();
        output.WriteLine($"deployment in {d.Directory}");
        var receiver = d.Receiver();
        var log = new DeliveryLog();
        var reading = log.ReadUntilAsync(receiver, Expected, Bound);
        var s1 = d.Sender(1);
        var s2 = d.Sender(2);
        using var progress = new ProgressLines(output, () => $"delivered {log.Count}; {s1.Stats}; {s2.Stats}; {receiver.Stats}");
        const int FirstPart = PerSender / 3;
        await Task.WhenAll(Traffic.SendAsync(s1, FirstPart, Bound), Traffic.SendAsync(s2, FirstPart, Bound));
        var killed = await d.LeaderAsync();
        var survivor = d.Config.Replicas.First(r => r.Id != killed).Id;
        var regencyBefore = (await d.ReplicaHealthAsync(survivor)).Counters["regency"];
        output.WriteLine($"killing leader replica {killed} (regency {regencyBefore}) after {FirstPart} per sender were acknowledged");
        await d.KillReplicaAsync(killed);
        await Task.WhenAll(Traffic.SendAsync(s1, PerSender - FirstPart, Bound, first: FirstPart), Traffic.SendAsync(s2, PerSender - FirstPart, Bound, first: FirstPart));
        await reading;
        log.AssertExactlyOnceInOrder(Expected);
        var regencyAfter = (await d.ReplicaHealthAsync(survivor)).Counters["regency"];
        output.WriteLine($"regency {regencyBefore} -> {regencyAfter}; {receiver.Stats}");
        Assert.True(regencyAfter > regencyBefore, "ordering after the kill needs a new regency");
        Assert.NotEqual(killed, (int)(regencyAfter % d.Config.N));
        d.Passed = true;
    }

    /// <summary>
    /// The receiver commits what it processed and is shut down mid-stream while both senders keep sending;
    /// a new receiver process state (same cursor store) resumes exactly after the commit.
    /// </summary>
    [Fact]
    public async Task A_receiver_restarted_mid_stream_resumes_after_its_commit_with_nothing_lost_or_twice()
    {
        await using var d = await SieveDeployment.StartAsync();
        output.WriteLine($"deployment in {d.Directory}");
        var log = new DeliveryLog();
        var first = d.Receiver();
        var s1 = d.Sender(1);
        var s2 = d.Sender(2);
        var sending = Task.WhenAll(Traffic.SendAsync(s1, PerSender, Bound), Traffic.SendAsync(s2, PerSender, Bound));
        var half = new Dictionary<int, int> { [1] = PerSender / 3, [2] = PerSender / 3 };
        await log.ReadUntilAsync(first, half, Bound);
        var before = log.Count;
        output.WriteLine($"restarting the receiver after {before} deliveries: {first.Stats}");
        Assert.True(before >= PerSender * 2 / 3);
        await d.RetireAsync(first);
        var second = d.Receiver();
        await log.ReadUntilAsync(second, Expected, Bound);
        await sending;
        output.WriteLine($"after the restart: {second.Stats}");
        log.AssertExactlyOnceInOrder(Expected);
        Assert.True(second.Stats.Delivered > 0 && second.Stats.Delivered == log.Count - before);
        d.Passed = true;
    }

    /// <summary>
    /// Sender 3's host is compromised: it replays its messages (to the same and to the other pre-SQ),
    /// jumps far ahead in sequence numbers and floods beyond its grant. Each is dropped and counted where
    /// the sieve says it is; senders 1 and 2 are delivered in full, and of sender 3 the receiver sees only
    /// an unrepeated, in-order prefix.
    /// </summary>
    [Fact]
    public async Task A_compromised_sender_replaying_jumping_and_flooding_is_dropped_and_counted_without_harm_to_others()
    {
        await using var d = await SieveDeployment.StartAsync(
            new() { PreSqOptions = ["--grant-rate", "100", "--grant-burst", "3200"] }, senders: [1, 2, 3]);
        output.WriteLine($"deployment in {d.Directory}");
        var log = new DeliveryLog();
        var receiver = d.Receiver();
        var reading = log.ReadUntilAsync(receiver, Expected, Bound);
        var s1 = d.Sender(1);
        var s2 = d.Sender(2);
        using var progress = new ProgressLines(output, () => $"delivered {log.Count}; {s1.Stats}; {s2.Stats}; {receiver.Stats}");
        var honest = Task.WhenAll(Traffic.SendAsync(s1, PerSender, Bound), Traffic.SendAsync(s2, PerSender, Bound));

        await using var bad = new CompromisedSender(d.Context, 3);
        var firstTen = Enumerable.Range(1, 10).Select(i => bad.Message(i)).ToList();
        // One stream to pre-SQ 4, so it sees them in this order: a pre-SQ adopts the first number it sees from
        // a sender, and separate streams raced (the far-ahead one, seen first, made everything else "too old").
        await bad.SendAsync(4, [
            .. firstTen,
            .. firstTen,                                                    // replay to the same pre-SQ: (b)
            bad.Message(1_000_000),                                         // far ahead of the window: (b)
            .. Enumerable.Range(11, 6_000).Select(i => bad.Message(i)),    // beyond the grant: (d)
        ]);
        await bad.SendAsync(5, firstTen);                                   // replay through the other: passes (b) there, refused at (e)

        try
        {
            await honest;
            await reading;
        }
        catch (OperationCanceledException)
        {
            output.WriteLine(await d.DescribeAsync());
            throw;
        }
        // Let whatever of sender 3 got through arrive too, then check what the receiver holds.
        await DrainAsync(receiver, log, TimeSpan.FromSeconds(5));
        Assert.Empty(log.Violations);
        Assert.Equal(PerSender, log.NextIndex(1));
        Assert.Equal(PerSender, log.NextIndex(2));
        var third = log.NextIndex(3);
        output.WriteLine($"sender 3: {third} delivered");
        Assert.InRange(third, 10, 6_009);

        var preSq4 = (await d.PreSqHealthAsync(4)).Counters;
        var preSq5 = (await d.PreSqHealthAsync(5)).Counters;
        output.WriteLine("pre-SQ 4: " + string.Join(" ", preSq4.Where(kv => kv.Key.StartsWith("drop", StringComparison.Ordinal)).Select(kv => $"{kv.Key}={kv.Value}")));
        Assert.True(preSq4.GetValueOrDefault("drop.Sequence.Replay") >= 10);
        Assert.True(preSq4.GetValueOrDefault("drop.Sequence.TooFarAhead") >= 1);
        Assert.True(preSq4.GetValueOrDefault("drop.Grant.GrantExceeded") > 0);
        Assert.True(preSq5.GetValueOrDefault("passed") > 0);
        var replica = (await d.ReplicaHealthAsync(0)).Counters;
        Assert.True(replica.GetValueOrDefault("drop.ReplicaAdmission.Replay") >= 10, "the copies pre-SQ 5 forwarded are replays to the replicas");
        d.Passed = true;
    }

    private static async Task DrainAsync(Sdk.Receiver.SieveQReceiver receiver, DeliveryLog log, TimeSpan quiet)
    {
        using var cts = new CancellationTokenSource(quiet);
        try
        {
            await foreach (var m in receiver.ReadAllAsync(cts.Token))
            {
                log.Record(m);
            }
        }
        catch (OperationCanceledException) when (cts.IsCancellationRequested)
        {
            // quiet for long enough
        }
    }
}
