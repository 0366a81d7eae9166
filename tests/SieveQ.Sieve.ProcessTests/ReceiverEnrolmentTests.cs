using SieveQ.Agent.Hosting;
using SieveQ.Deployment;
using SieveQ.Sdk;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Hosting.Keys;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A receiver enrolled and revoked through the real CLI while the deployment runs, nothing restarted: `sieveq enrol
/// request` on the receiver's host makes its keys under a name of its own, `sieveq enrol receiver` orders the
/// enrolment, `sieveq route allow` gives sender 1 a route to it, and the receiver's application (its own keys, the
/// deployment's enrolment from before) connects, subscribes to the replica processes and gets every message exactly
/// once and in order, from a sender that was running before the receiver existed. After `sieveq enrol revoke
/// --receiver` the replicas reject messages to it with the reason, and it cannot connect again.
/// </summary>
public sealed class ReceiverEnrolmentTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Bound = TimeSpan.FromMinutes(3);
    private const int NewReceiver = 130;
    private const string Name = "orders-in";

    [Fact]
    public async Task A_receiver_enrolled_from_the_cli_while_running_gets_its_messages_and_none_after_revocation()
    {
        await using var d = await SieveDeployment.StartAsync(senders: [1]);
        output.WriteLine($"deployment in {d.Directory}");
        var adminKey = Path.Combine(d.Config.Resolve(d.Config.KeyDirectory), "administrator.pem");
        var admin = new[] { "--deployment", d.Directory, "--key", adminKey };
        var host = Path.Combine(d.Directory, "new-receiver-host");

        var request = await AdminProcess.RunAsync(["enrol", "request", "--name", Name, "--out", host]);
        Assert.True(request.Code == 0, request.Output);
        var before = await Assert.ThrowsAsync<SieveQConfigurationException>(() => NewReceiverAsync(d, host));
        Assert.Contains($"receiver {NewReceiver} is not enrolled in the running deployment (2 replica-SQs agree)", before.Message, StringComparison.Ordinal);
        Assert.Contains("sieveq enrol receiver", before.Message, StringComparison.Ordinal);

        await using var sender = await SieveQSender.ConnectAsync(d.Context.ToClientConfiguration(), 1, Path.Combine(d.Directory, "sender-1"));
        var unknown = await Assert.ThrowsAsync<SendRefusedException>(async () => await sender.SendAsync(NewReceiver, Traffic.Payload(1, 0)));
        Assert.Equal(SendRefusal.ReceiverNotEnrolled, unknown.Reason);

        var enrol = await AdminProcess.RunAsync(["enrol", "receiver", "--request", Path.Combine(host, PartyEnrolmentRequest.FileName(Name)), "--id", $"{NewReceiver}", .. admin]);
        output.WriteLine(enrol.Output);
        Assert.True(enrol.Code == 0, enrol.Output);
        Assert.Contains($"enrol receiver {NewReceiver} ('{Name}'): applied (enrolment version 1)", enrol.Output, StringComparison.Ordinal);
        var route = await AdminProcess.RunAsync(["route", "allow", "--sender", "1", "--receiver", $"{NewReceiver}", .. admin]);
        Assert.True(route.Code == 0, route.Output);
        foreach (var p in d.PreSqIds)
        {
            // The pre-SQs pass the receiver's acknowledgements once they know its key.
            await EventuallyAsync(async () => (await d.PreSqHealthAsync(p)).Counters.GetValueOrDefault("enrolment_version") >= 1, $"pre-SQ {p} learning the enrolment");
        }

        const int Count = 5;
        await using (var receiver = await NewReceiverAsync(d, host))
        {
            var log = new DeliveryLog();
            var expected = new Dictionary<int, int> { [1] = Count };
            var reading = log.ReadUntilAsync(receiver, expected, Bound, commitEvery: 1);
            // The sender was not restarted: refused for the receiver, it asks the deployment again (at most every 2 s).
            var outcomes = new List<Task<MessageOutcome>>();
            var deadline = DateTime.UtcNow + Bound;
            for (var i = 0; i < Count; i++)
            {
                while (true)
                {
                    try
                    {
                        outcomes.Add((await sender.SendAsync(NewReceiver, Traffic.Payload(1, i))).Outcome);
                        break;
                    }
                    catch (SendRefusedException e) when (e.Reason == SendRefusal.ReceiverNotEnrolled && DateTime.UtcNow < deadline)
                    {
                        await Task.Delay(250);
                    }
                }
            }
            Assert.All(await Task.WhenAll(outcomes).WaitAsync(Bound), o => Assert.Equal(MessageOutcomeKind.Delivered, o.Kind));
            await reading;
            log.AssertExactlyOnceInOrder(expected);
        }

        var revoke = await AdminProcess.RunAsync(["enrol", "revoke", "--receiver", $"{NewReceiver}", .. admin]);
        output.WriteLine(revoke.Output);
        Assert.True(revoke.Code == 0, revoke.Output);
        Assert.Contains($"revoke receiver {NewReceiver}: applied (enrolment version 2", revoke.Output, StringComparison.Ordinal);

        // The sender still believes in the receiver: the replicas reject the message, and its outcome says why.
        var rejected = await (await sender.SendAsync(NewReceiver, Traffic.Payload(1, Count))).Outcome.WaitAsync(Bound);
        output.WriteLine(rejected.ToString());
        Assert.Equal(MessageOutcomeKind.Rejected, rejected.Kind);
        Assert.Equal(RejectionReason.ReceiverNotEnrolled, rejected.Reason);
        var gone = await Assert.ThrowsAsync<SieveQConfigurationException>(() => NewReceiverAsync(d, host));
        Assert.Contains($"receiver {NewReceiver} was revoked through the ordering", gone.Message, StringComparison.Ordinal);

        // Refused at the command line with nothing ordered: a revocation names exactly one party.
        var both = await AdminProcess.RunAsync(["enrol", "revoke", "--sender", "1", "--receiver", $"{SieveDeployment.ReceiverId}", .. admin]);
        Assert.Equal(2, both.Code);
        Assert.Contains("name exactly one party to revoke", both.Output, StringComparison.Ordinal);
        d.Passed = true;
    }

    /// <summary>The receiver's own host: its keys under its own name, and the deployment's enrolment from before it was enrolled.</summary>
    private static Task<SieveQReceiver> NewReceiverAsync(SieveDeployment d, string host)
    {
        var config = d.Context.ToClientConfiguration() with { Keys = new PemFileKeyStore(host), KeyName = Name };
        Assert.DoesNotContain(config.Enrolment.Receivers, r => r.Id == NewReceiver);
        return SieveQReceiver.ConnectAsync(config, NewReceiver, Path.Combine(host, "state"));
    }

    private static async Task EventuallyAsync(Func<Task<bool>> condition, string what)
    {
        var deadline = Environment.TickCount64 + (long)Bound.TotalMilliseconds;
        while (!await condition())
        {
            Assert.True(Environment.TickCount64 < deadline, $"timed out waiting for {what}");
            await Task.Delay(200);
        }
    }
}
