using SieveQ.Agent.Hosting;
using SieveQ.Deployment;
using Microsoft.Extensions.Time.Testing;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sdk.Tests;

/// <summary>
/// What the deployment would refuse, the sender refuses at the call with a typed error naming the enrolment, route
/// or limit: before, such a message was numbered, sent, acknowledged and dropped by the replicas' rules in silence.
/// </summary>
public sealed class SendRefusalTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-sdk-refusal-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private DeploymentContext Deployment(bool withRoutes = true)
    {
        var config = DeploymentBootstrap.Create(Path.Combine(_dir, "d"), new LocalDeploymentSpec { Senders = [1], Receivers = [100, 101], BasePort = 0 });
        // One route only, 1 -> 100, of 1,000 bytes: receiver 101 is enrolled but has no route from sender 1.
        var routes = withRoutes ? new[] { new RouteEntry { Sender = 1, Receiver = 100, MaxBytes = 1_000 } } : [];
        DeploymentFile.Save(config with { Routes = routes }, Path.Combine(config.BaseDirectory, DeploymentFile.FileName));
        return DeploymentContext.Load(config.BaseDirectory);
    }

    [Fact]
    public async Task Unenrolled_receivers_missing_routes_and_oversized_data_are_refused_at_the_call_and_nothing_is_numbered()
    {
        await using var sender = SieveQSender.Create(Deployment().ToClientConfiguration(), 1, Path.Combine(_dir, "state"));

        var e = await Assert.ThrowsAsync<SendRefusedException>(async () => await sender.SendAsync(999, new byte[10]));
        Assert.Equal(SendRefusal.ReceiverNotEnrolled, e.Reason);
        Assert.Contains("receiver 999 is not enrolled", e.Message, StringComparison.Ordinal);

        e = await Assert.ThrowsAsync<SendRefusedException>(async () => await sender.SendAsync(101, new byte[10]));
        Assert.Equal(SendRefusal.NoRoute, e.Reason);
        Assert.Contains("no route from sender 1 to receiver 101", e.Message, StringComparison.Ordinal);

        e = await Assert.ThrowsAsync<SendRefusedException>(async () => await sender.SendAsync(100, new byte[1_001]));
        Assert.Equal(SendRefusal.TooLarge, e.Reason);
        Assert.Equal(1_000, e.Limit);
        Assert.Contains("above the 1000 bytes", e.Message, StringComparison.Ordinal);

        Assert.Equal(0, sender.LastSeq);
        Assert.Equal(0, sender.Stats.Accepted);
    }

    /// <summary>
    /// Routes change through the ordering, so a refusal for the route first asks the deployment (at most every 2 s):
    /// what it answers replaces the view, no answer leaves the view standing, and a rule-set answer ends route checks.
    /// </summary>
    [Fact]
    public async Task A_route_refusal_asks_the_deployment_again_at_most_every_two_seconds_and_takes_what_it_answers()
    {
        var time = new FakeTimeProvider();
        var asked = 0;
        IReadOnlyList<Route>? answer = [];
        Exception? failure = null;
        var admission = SendAdmission.For(Deployment().ToClientConfiguration(), 1, _ =>
        {
            asked++;
            return failure is null ? Task.FromResult<IReadOnlyList<Route>?>(answer) : Task.FromException<IReadOnlyList<Route>?>(failure);
        }, time: time);

        // Not enrolled is not a route question: nobody is asked.
        await Assert.ThrowsAsync<SendRefusedException>(async () => await admission.CheckAsync(999, 10, default));
        Assert.Equal(0, asked);

        // No route to 101 in the file: the deployment is asked, and says the route 1 -> 100 is gone too.
        var e = await Assert.ThrowsAsync<SendRefusedException>(async () => await admission.CheckAsync(101, 10, default));
        Assert.Equal((SendRefusal.NoRoute, 1), (e.Reason, asked));
        Assert.Empty(admission.Routes!);

        // Allowed again at the replicas, but within 2 s of the last question: refused from the view, nobody asked.
        answer = [new Route(1, 100, 50)];
        await Assert.ThrowsAsync<SendRefusedException>(async () => await admission.CheckAsync(100, 10, default));
        Assert.Equal(1, asked);
        time.Advance(SendAdmission.RefreshInterval);
        await admission.CheckAsync(100, 10, default);
        Assert.Equal(2, asked);
        e = await Assert.ThrowsAsync<SendRefusedException>(async () => await admission.CheckAsync(100, 51, default));
        Assert.Equal((SendRefusal.TooLarge, 50L), (e.Reason, e.Limit));

        // No f+1 answer: the view stands.
        time.Advance(SendAdmission.RefreshInterval);
        failure = new ConnectUnconfirmedException("sender 1", "its enrolment", 0, 0, 2, TimeSpan.FromSeconds(1), "down");
        await Assert.ThrowsAsync<SendRefusedException>(async () => await admission.CheckAsync(100, 51, default));
        Assert.Equal(3, asked);
        Assert.Equal(50, admission.Routes![100]);

        // The replicas now run signed rule sets: they decide, so the sender stops checking routes.
        time.Advance(SendAdmission.RefreshInterval);
        (failure, answer) = (null, null);
        await admission.CheckAsync(101, 60_000, default);
        Assert.Null(admission.Routes);
    }

    /// <summary>
    /// Receivers are enrolled through the ordering too: one the view does not know is asked about (f+1 alike) before
    /// the message is refused, at most every 2 s; once enrolled it is known for good, with the routes asked for with it.
    /// </summary>
    [Fact]
    public async Task A_receiver_the_view_does_not_know_is_asked_about_and_taken_once_the_deployment_enrolled_it()
    {
        var time = new FakeTimeProvider();
        var (routesAsked, receiversAsked, enrolled) = (0, 0, false);
        var admission = SendAdmission.For(Deployment().ToClientConfiguration(), 1,
            _ =>
            {
                routesAsked++;
                return Task.FromResult<IReadOnlyList<Route>?>(enrolled ? [new Route(1, 100, 65_536), new Route(1, 130, 100)] : [new Route(1, 100, 65_536)]);
            },
            (receiver, _) =>
            {
                receiversAsked++;
                return Task.FromResult(enrolled && receiver == 130);
            },
            time);

        var e = await Assert.ThrowsAsync<SendRefusedException>(async () => await admission.CheckAsync(130, 10, default));
        Assert.Equal((SendRefusal.ReceiverNotEnrolled, 1, 0), (e.Reason, receiversAsked, routesAsked));
        Assert.Contains("sieveq enrol receiver", e.Message, StringComparison.Ordinal);

        // Enrolled at the replicas, but asked about within 2 s: refused from the view.
        enrolled = true;
        await Assert.ThrowsAsync<SendRefusedException>(async () => await admission.CheckAsync(130, 10, default));
        Assert.Equal(1, receiversAsked);

        time.Advance(SendAdmission.RefreshInterval);
        await admission.CheckAsync(130, 10, default);
        Assert.Equal((2, 1), (receiversAsked, routesAsked));
        Assert.Equal(100, admission.Routes![130]);

        // Known now: its route's limit is judged from the view, nobody is asked about it again.
        time.Advance(SendAdmission.RefreshInterval);
        await admission.CheckAsync(130, 100, default);
        Assert.Equal(2, receiversAsked);
    }

    [Fact]
    public async Task With_the_deployment_down_send_and_wait_end_in_a_typed_unavailable_and_nothing_more_is_numbered()
    {
        var options = new SieveQSenderOptions
        {
            UnavailableAfter = TimeSpan.FromMilliseconds(500),
            Protocol = new SieveQ.Sieve.Sender.SenderSqOptions { MaxOutstanding = 4 },
        };
        await using var sender = SieveQSender.Create(Deployment().ToClientConfiguration(), 1, Path.Combine(_dir, "state"), options);
        for (var i = 0; i < 4; i++)
        {
            await sender.SendAsync(100, new byte[10]);
        }
        var started = DateTime.UtcNow;
        var e = await Assert.ThrowsAsync<SieveQUnavailableException>(async () => await sender.SendAsync(100, new byte[10]));
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(20));
        Assert.Equal(4, e.Outstanding);
        Assert.Equal(0, e.AcknowledgedUpTo);
        Assert.Equal(4, sender.LastSeq);  // the fifth was not numbered
        await Assert.ThrowsAsync<SieveQUnavailableException>(() => sender.WaitAcknowledgedAsync(4));
        // A caller's own cancellation stays a cancellation.
        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(50));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => sender.WaitAcknowledgedAsync(4, cts.Token));
    }

    [Fact]
    public async Task With_the_deployment_down_a_message_ends_timed_out_and_stays_in_the_outbox()
    {
        var options = new SieveQSenderOptions { OutcomeTimeout = TimeSpan.FromMilliseconds(300) };
        await using var sender = SieveQSender.Create(Deployment().ToClientConfiguration(), 1, Path.Combine(_dir, "state"), options);
        var sent = await sender.SendAsync(100, new byte[10]);
        var outcome = await sent.Outcome.WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal(new MessageOutcome(1, 100, MessageOutcomeKind.TimedOut), outcome);
        Assert.Equal(1, sender.Stats.TimedOut);
        // Not given up: still pending in the durable outbox, so a later run (or this one) sends it when the deployment returns.
        Assert.Equal(1, sender.Stats.OutboxPending);
        Assert.Equal(1, sender.Stats.Outstanding);
    }

    [Fact]
    public void A_party_with_keys_but_no_enrolment_is_refused_at_create_saying_so()
    {
        var ctx = Deployment();
        // Keys made under the naming the key store uses, but the enrolment is left as it was.
        var keyDir = ctx.Config.Resolve(ctx.Config.KeyDirectory);
        foreach (var kind in new[] { "sign", "agree" })
        {
            File.Copy(Path.Combine(keyDir, $"sender-1-{kind}.pem"), Path.Combine(keyDir, $"sender-7-{kind}.pem"));
        }
        var e = Assert.Throws<SieveQConfigurationException>(() => SieveQSender.Create(ctx.ToClientConfiguration(), 7, Path.Combine(_dir, "state7")));
        Assert.Contains("sender 7 is not enrolled", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_signing_key_that_is_not_the_enrolled_one_is_refused_at_create()
    {
        var ctx = Deployment();
        using var other = System.Security.Cryptography.ECDsa.Create(System.Security.Cryptography.ECCurve.NamedCurves.nistP256);
        File.WriteAllText(Path.Combine(ctx.Config.Resolve(ctx.Config.KeyDirectory), "sender-1-sign.pem"), other.ExportPkcs8PrivateKeyPem());
        var e = Assert.Throws<SieveQConfigurationException>(() => SieveQSender.Create(ctx.ToClientConfiguration(), 1, Path.Combine(_dir, "state")));
        Assert.Contains("not the one its enrolment pins", e.Message, StringComparison.Ordinal);
    }
}
