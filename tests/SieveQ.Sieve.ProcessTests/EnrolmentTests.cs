using SieveQ.Agent.Hosting;
using SieveQ.Deployment;
using SieveQ.Sdk;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A sender enrolled and revoked through the real CLI while the deployment runs, nothing restarted: `sieveq enrol
/// request` makes the new sender's keys and request, `sieveq enrol sender` orders its enrolment through a pre-SQ
/// process, every pre-SQ learns it from f+1 replicas, and its messages reach the receiver exactly once and in order;
/// after `sieveq enrol revoke` its messages are refused and nothing more of it is delivered. The new sender's application
/// holds only its own keys and the deployment's enrolment from before: SieveQSender.ConnectAsync learns its record
/// from f+1 replicas, and refuses it before its enrolment and after its revocation; a second process for the id is
/// refused by the id lease the first holds.
/// </summary>
public sealed class EnrolmentTests(ITestOutputHelper output)
{
    private static readonly byte[] OpenRules = """
        { "schema": "sieveq-ruleset/v1", "version": 1, "name": "open",
          "rules": [{ "name": "open", "action": "allow", "from": "any", "to": "any" }] }
        """u8.ToArray();

    private static readonly TimeSpan Bound = TimeSpan.FromMinutes(3);
    private const int NewSender = 7;

    [Fact]
    public async Task A_sender_enrolled_from_the_cli_while_running_is_delivered_and_refused_after_revocation()
    {
        await using var d = await SieveDeployment.StartAsync(senders: [1], ruleSet: OpenRules);
        output.WriteLine($"deployment in {d.Directory}");
        var adminKey = Path.Combine(d.Config.Resolve(d.Config.KeyDirectory), "administrator.pem");
        var senderHost = Path.Combine(d.Directory, "new-sender-host");

        var request = await AdminProcess.RunAsync(["enrol", "request", "--name", $"sender-{NewSender}", "--out", senderHost]);
        Assert.True(request.Code == 0, request.Output);
        var requestFile = Path.Combine(senderHost, PartyEnrolmentRequest.FileName($"sender-{NewSender}"));
        if (!OperatingSystem.IsWindows())
        {
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(senderHost, $"sender-{NewSender}-sign.pem")));
        }

        // Before its enrolment, the connect-time check refuses it, naming the commands that enrol it.
        var before = await Assert.ThrowsAsync<SieveQConfigurationException>(() => NewSenderClientAsync(d, senderHost));
        Assert.Contains($"sender {NewSender} is not enrolled in the running deployment (2 replica-SQs agree)", before.Message, StringComparison.Ordinal);

        var enrol = await AdminProcess.RunAsync(["enrol", "sender", "--request", requestFile, "--id", $"{NewSender}", "--deployment", d.Directory, "--key", adminKey]);
        output.WriteLine(enrol.Output);
        Assert.True(enrol.Code == 0, enrol.Output);
        Assert.Contains($"enrol sender {NewSender} ('sender-{NewSender}'): applied (enrolment version 1)", enrol.Output, StringComparison.Ordinal);
        foreach (var p in d.PreSqIds)
        {
            await EventuallyAsync(async () => (await d.PreSqHealthAsync(p)).Counters.GetValueOrDefault("enrolment_version") >= 1, $"pre-SQ {p} learning the enrolment");
        }

        var receiver = d.Receiver();
        var log = new DeliveryLog();
        var expected = new Dictionary<int, int> { [1] = 5, [NewSender] = 10 };
        var reading = log.ReadUntilAsync(receiver, expected, Bound);
        await Traffic.SendAsync(d.Sender(1), 5, Bound);
        await using (var sender = await NewSenderClientAsync(d, senderHost))
        {
            // A second process for the same id (another state folder) is refused by the lease the replicas granted the first.
            var twin = await Assert.ThrowsAsync<IdHeldException>(() => SieveQSender.ConnectAsync(
                d.Context.ToClientConfiguration() with { Keys = new PemFileKeyStore(senderHost) }, NewSender, Path.Combine(senderHost, "twin-state")));
            Assert.Contains($"pid {Environment.ProcessId}", twin.Holder, StringComparison.Ordinal);
            await Traffic.SendAsync(sender, 10, Bound);
        }
        await reading;
        log.AssertExactlyOnceInOrder(expected);

        var revoke = await AdminProcess.RunAsync(["enrol", "revoke", "--sender", $"{NewSender}", "--deployment", d.Directory, "--key", adminKey]);
        output.WriteLine(revoke.Output);
        Assert.True(revoke.Code == 0, revoke.Output);
        Assert.Contains($"revoke sender {NewSender}: applied (enrolment version 2", revoke.Output, StringComparison.Ordinal);
        foreach (var p in d.PreSqIds)
        {
            await EventuallyAsync(async () => (await d.PreSqHealthAsync(p)).Counters.GetValueOrDefault("enrolment_version") >= 2, $"pre-SQ {p} learning the revocation");
        }

        var refused = await Assert.ThrowsAsync<SieveQConfigurationException>(() => NewSenderClientAsync(d, senderHost));
        Assert.Contains($"sender {NewSender} was revoked through the ordering", refused.Message, StringComparison.Ordinal);

        // A sender that skips the check (Create with its own copy of its old enrolment record): its state folder still
        // holds its sequence numbers, so it carries on from index 10, and the pre-SQs refuse it.
        await using (var revoked = UncheckedSenderClient(d, senderHost))
        {
            using var stop = new CancellationTokenSource();
            var sending = Task.Run(async () =>
            {
                for (var i = 10; i < 15; i++)
                {
                    await revoked.SendAsync(SieveDeployment.ReceiverId, Traffic.Payload(NewSender, i), stop.Token);
                }
            });
            var dropped = 0L;
            await EventuallyAsync(async () =>
            {
                dropped = 0;
                foreach (var p in d.PreSqIds)
                {
                    var c = (await d.PreSqHealthAsync(p)).Counters;
                    dropped += c.Where(kv => kv.Key.StartsWith("drop.", StringComparison.Ordinal)).Sum(kv => kv.Value);
                }
                return dropped > 0;
            }, "the pre-SQs refusing the revoked sender's frames");
            output.WriteLine(await d.DescribeAsync());
            await log.ReadUntilAsync(receiver, new Dictionary<int, int> { [NewSender] = 11 }, TimeSpan.FromSeconds(5));
            Assert.Equal(10, log.NextIndex(NewSender));
            Assert.Empty(log.Violations);
            await stop.CancelAsync();
            await Task.WhenAny(sending, Task.Delay(TimeSpan.FromSeconds(5)));
        }
        d.Passed = true;
    }

    /// <summary>
    /// The new sender's own host: its keys from its own folder (never the deployment's) and the deployment's enrolment as
    /// it was before the sender was enrolled; ConnectAsync learns the sender's record from f+1 replicas.
    /// </summary>
    private static Task<SieveQSender> NewSenderClientAsync(SieveDeployment d, string senderHost)
    {
        var config = d.Context.ToClientConfiguration() with { Keys = new PemFileKeyStore(senderHost) };
        Assert.DoesNotContain(config.Enrolment.Senders, s => s.Id == NewSender);
        return SieveQSender.ConnectAsync(config, NewSender, Path.Combine(senderHost, "state"));
    }

    private static SieveQSender UncheckedSenderClient(SieveDeployment d, string senderHost)
    {
        var request = PartyEnrolmentRequest.Load(Path.Combine(senderHost, PartyEnrolmentRequest.FileName($"sender-{NewSender}")));
        var config = d.Context.ToClientConfiguration();
        config = config with
        {
            Keys = new PemFileKeyStore(senderHost),
            Enrolment = config.Enrolment with
            {
                Senders = [.. config.Enrolment.Senders, new EnrolledSender(NewSender, request.Name, request.SignaturePublicKey, request.AgreementPublicKey)],
            },
        };
        return SieveQSender.Create(config, NewSender, Path.Combine(senderHost, "state"));
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
