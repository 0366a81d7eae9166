using SieveQ.Agent.Hosting;
using SieveQ.Deployment;
using SieveQ.Sdk;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Envelope;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// The fixed routes of a running deployment without rule sets, changed from the real CLI with nothing restarted:
/// `sieveq route remove` makes every replica reject the route's messages from that point of the agreed order on (a
/// sender whose view is older learns it from the message's outcome; one that connects after it is refused at the
/// call); `sieveq route allow` opens it again with a new size limit, and a sender refused for the route asks the
/// deployment again before it refuses, so it sends without a restart and is held to the new limit. deployment.json
/// keeps the initial routes.
/// </summary>
public sealed class RouteChangeTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Bound = TimeSpan.FromMinutes(3);
    private const int Receiver = SieveDeployment.ReceiverId;

    [Fact]
    public async Task Routes_changed_from_the_cli_while_running_hold_at_the_replicas_and_at_the_senders_call()
    {
        await using var d = await SieveDeployment.StartAsync(senders: [1]);
        output.WriteLine($"deployment in {d.Directory}");
        Assert.Null(d.Config.Rules);
        Assert.NotNull(d.Config.AdministratorKey);
        var adminKey = Path.Combine(d.Config.Resolve(d.Config.KeyDirectory), "administrator.pem");
        var route = new[] { "--sender", "1", "--receiver", $"{Receiver}", "--deployment", d.Directory, "--key", adminKey };
        var state = Path.Combine(d.Directory, "route-sender");
        var config = d.Context.ToClientConfiguration();

        await using (var before = await SieveQSender.ConnectAsync(config, 1, state))
        {
            Assert.Equal(MessageOutcomeKind.Delivered, (await (await before.SendAsync(Receiver, Traffic.Payload(1, 0))).Outcome.WaitAsync(Bound)).Kind);

            var removed = await AdminProcess.RunAsync(["route", "remove", .. route]);
            output.WriteLine(removed.Output);
            Assert.True(removed.Code == 0, removed.Output);
            Assert.Contains($"remove route sender 1 -> receiver {Receiver}: applied", removed.Output, StringComparison.Ordinal);
            Assert.Contains("deployment.json is not changed", removed.Output, StringComparison.Ordinal);

            // This sender's view is from before the change: the replicas reject the message and its outcome says so.
            var stale = await (await before.SendAsync(Receiver, Traffic.Payload(1, 1))).Outcome.WaitAsync(Bound);
            output.WriteLine(stale.ToString());
            Assert.Equal(MessageOutcomeKind.Rejected, stale.Kind);
            Assert.Equal(RejectionReason.RuleDenied, stale.Reason);
        }

        await using var after = await SieveQSender.ConnectAsync(config, 1, state);
        var refused = await Assert.ThrowsAsync<SendRefusedException>(async () => await after.SendAsync(Receiver, new byte[50]));
        Assert.Equal(SendRefusal.NoRoute, refused.Reason);
        Assert.Contains("sieveq route allow", refused.Message, StringComparison.Ordinal);

        var allowed = await AdminProcess.RunAsync(["route", "allow", .. route, "--max-bytes", "100"]);
        output.WriteLine(allowed.Output);
        Assert.True(allowed.Code == 0, allowed.Output);
        Assert.Contains($"allow route sender 1 -> receiver {Receiver} (up to 100 bytes): applied (a new route)", allowed.Output, StringComparison.Ordinal);

        // The same sender, not restarted: a refusal for the route asks the deployment again first (at most every 2 s).
        SentMessage? sent = null;
        var deadline = DateTime.UtcNow + Bound;
        while (sent is null)
        {
            try
            {
                sent = await after.SendAsync(Receiver, new byte[50]);
            }
            catch (SendRefusedException e) when (e.Reason == SendRefusal.NoRoute && DateTime.UtcNow < deadline)
            {
                await Task.Delay(250);
            }
        }
        Assert.Equal(MessageOutcomeKind.Delivered, (await sent.Outcome.WaitAsync(Bound)).Kind);
        var tooLarge = await Assert.ThrowsAsync<SendRefusedException>(async () => await after.SendAsync(Receiver, new byte[200]));
        Assert.Equal(SendRefusal.TooLarge, tooLarge.Reason);
        Assert.Equal(100, tooLarge.Limit);

        // Refused at the command line, with nothing ordered: a size above the envelope's, and route changes on a
        // deployment's own routes go through the ordering only.
        var badSize = await AdminProcess.RunAsync(["route", "allow", .. route, "--max-bytes", $"{EnvelopeLimits.MaxDataBytes + 1}"]);
        Assert.Equal(2, badSize.Code);
        Assert.Contains("--max-bytes must be 0 to", badSize.Output, StringComparison.Ordinal);
        var unknown = await AdminProcess.RunAsync(["route", "allow", "--sender", "1", "--receiver", "555", "--deployment", d.Directory, "--key", adminKey]);
        Assert.Equal(3, unknown.Code);
        Assert.Contains("receiver 555 is not enrolled", unknown.Output, StringComparison.Ordinal);

        Assert.Contains(DeploymentFile.Load(d.Directory).Routes, r => r.Sender == 1 && r.Receiver == Receiver && r.MaxBytes == 64 * 1024);
        d.Passed = true;
    }
}
