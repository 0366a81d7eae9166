using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Controller;
using SieveQ.Deployment;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>
/// A replica's notices reach the controller of its deployment, signed with the replica's identity key that
/// controller.json pins under role replica (as `sieveq up` writes it), and the controller records a notice once f+1
/// replicas reported it, naming them.
/// </summary>
public sealed class ControllerNoticeReportTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-notice-").FullName;

    [Fact]
    public async Task Two_replicas_reporting_the_same_notice_get_it_recorded_once_with_both_named()
    {
        var deployment = DeploymentBootstrap.Create(_dir, new LocalDeploymentSpec { BasePort = PortPlan.FindFreeBase(4, 2), Senders = [1], Receivers = [100] });
        ControllerConfig.EnsureLocal(deployment);
        await using var controller = ControllerHost.ForDeployment(_dir, NullLoggerFactory.Instance);
        await controller.StartAsync();

        var metrics = new ReplicaSqMetrics[] { new(0), new(1) };
        var identities = new[] { IdentityKey.Load(Path.Combine(_dir, "keys", "replica-0.pem")), IdentityKey.Load(Path.Combine(_dir, "keys", "replica-1.pem")) };
        var reporters = identities.Select((k, i) => ControllerNoticeReporter.ForDeployment(deployment, k, metrics[i], NullLogger.Instance)!).ToArray();
        using var stop = new CancellationTokenSource();
        var running = reporters.Select(r => Task.Run(() => r.RunAsync(stop.Token))).ToArray();
        try
        {
            var notice = new ControllerNotice(ControllerAction.RemovePreSq, 5, 1_764_000_000_000);
            reporters[0].Post(notice);
            await WaitAsync(() => metrics[0].Reported(NoticeReport.Taken) == 1);
            Assert.DoesNotContain(controller.Audit.Tail(20), r => r.Action == "replica-notice remove-pre-sq");

            reporters[1].Post(notice);
            await WaitAsync(() => metrics[1].Reported(NoticeReport.Taken) == 1);
            var record = Assert.Single(controller.Audit.Tail(20), r => r.Action == "replica-notice remove-pre-sq");
            Assert.Equal("f+1 replicas [0, 1]", record.Actor);
            Assert.Equal("pre-sq 5 (decided at agreed time 1764000000000)", record.Target);
            Assert.Contains("this controller runs no orchestrator", record.Outcome, StringComparison.Ordinal);
            Assert.Equal(0, metrics.Sum(m => m.Reported(NoticeReport.Refused) + m.Reported(NoticeReport.Dropped)));
        }
        finally
        {
            await stop.CancelAsync();
            await Task.WhenAll(running);
            foreach (var r in reporters)
            {
                r.Dispose();
            }
            foreach (var k in identities)
            {
                k.Dispose();
            }
            foreach (var m in metrics)
            {
                m.Dispose();
            }
        }
    }

    [Fact]
    public void Without_a_controller_json_nothing_is_reported()
    {
        var deployment = DeploymentBootstrap.Create(_dir, new LocalDeploymentSpec { BasePort = PortPlan.FindFreeBase(4, 2), Senders = [1], Receivers = [100] });
        using var identity = IdentityKey.Load(Path.Combine(_dir, "keys", "replica-0.pem"));
        using var metrics = new ReplicaSqMetrics(0);
        Assert.Null(ControllerNoticeReporter.ForDeployment(deployment, identity, metrics, NullLogger.Instance));
    }

    private static async Task WaitAsync(Func<bool> done)
    {
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (!done())
        {
            await Task.Delay(20, limit.Token);
        }
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
