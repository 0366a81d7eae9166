using System.Diagnostics;
using System.Globalization;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A recovery round through `sieveq admin replica round` while a sender sends, all real processes: the controller owns
/// the replica-SQs (as under `sieveq up`), restarts each in turn on its kept state, each time the current leader first
/// (it steps down as it stops), each once the previous one has caught up; every message is delivered exactly once, in order.
/// </summary>
public sealed class ReplicaRecoveryProcessTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Bound = TimeSpan.FromMinutes(6);

    [Fact]
    public async Task A_recovery_round_while_a_sender_sends_restarts_every_replica_and_loses_and_duplicates_nothing()
    {
        await using var controller = new ControllerOwner(output, ownsReplicas: true);
        await using var d = await SieveDeployment.StartAsync(senders: [1], startedElsewhere: controller.HostAsync);
        output.WriteLine($"deployment in {d.Directory}");
        var admin = ControllerConfig.LocalKeyFile(d.Config, ManagementRole.Administrator);
        var leader = await d.LeaderAsync();

        var sender = d.Sender(1, new SieveQ.Sdk.Sender.SieveQSenderOptions { UnavailableAfter = Bound });
        var clock = Stopwatch.StartNew();
        Task<(int Code, string Output)>? round = null;
        var sent = 0;
        var duringRound = 0;
        long last = 0;
        using (var cts = new CancellationTokenSource(Bound))
        {
            // Paced, and on until the round is over and a little after: the messages sent while each replica restarts are the point.
            while (round is null || !round.IsCompleted || sent < duringRound + 30)
            {
                last = await sender.SendAsync(SieveDeployment.ReceiverId, Traffic.Payload(1, sent), cts.Token);
                sent++;
                if (sent == 20)
                {
                    round = AdminProcess.RunAsync(["admin", "replica", "round", "--reason", "process test", "--deployment", d.Directory, "--key", admin], Bound);
                }
                if (round is { IsCompleted: false })
                {
                    duringRound++;
                }
                await Task.Delay(100, cts.Token);
            }
            await sender.WaitAcknowledgedAsync(last, cts.Token);
        }
        var (code, text) = await round;
        output.WriteLine(text);
        output.WriteLine($"{sent} messages sent, {duringRound} while the round ran; all acknowledged after {clock.Elapsed.TotalSeconds:0.0} s");
        Assert.True(code == 0, text);
        Assert.Contains("done (audit record", text, StringComparison.Ordinal);
        // The leader first; then whichever leads after it stepped down.
        var order = System.Text.RegularExpressions.Regex.Match(text, "done: recovered (.+) in ").Groups[1].Value.Split(", ");
        Assert.Equal($"replica-sq-{leader}", order[0]);
        Assert.Equal(d.Config.Replicas.Select(r => $"replica-sq-{r.Id}").Order(), order.Order());
        Assert.True(duringRound >= 20, $"only {duringRound} messages were sent during the round");

        var expected = new Dictionary<int, int> { [1] = sent };
        var log = new DeliveryLog();
        await log.ReadUntilAsync(d.Receiver(), expected, Bound);
        log.AssertExactlyOnceInOrder(expected);

        var audit = await AdminProcess.RunAsync(["admin", "audit", "--count", "60", "--deployment", d.Directory, "--key", admin]);
        output.WriteLine(audit.Output);
        foreach (var r in d.Config.Replicas)
        {
            Assert.Contains($"recover-replica replica-SQ {r.Id.ToString(CultureInfo.InvariantCulture)} (reason: recovery round: process test): recovered: started pid ",
                audit.Output, StringComparison.Ordinal);
        }
        foreach (var r in d.Config.Replicas)
        {
            var h = await d.ReplicaHealthAsync(r.Id);
            Assert.True(h.Healthy, $"replica-sq-{r.Id}: {h.Detail}");
        }
        d.Passed = true;
    }
}
