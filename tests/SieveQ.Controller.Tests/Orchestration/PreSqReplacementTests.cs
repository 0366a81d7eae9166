using System.Diagnostics.Metrics;
using System.Security.Cryptography;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Controller.Access;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Orchestration;
using SieveQ.Controller.Replicas;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary>
/// The f+1 notice that a pre-SQ is suspected, reported over real HTTP/2 by replica keys, replaces a real process
/// (`sleep` standing in for the pre-SQ) through the local-process orchestrator, once, within the bound, audited.
/// </summary>
public sealed class PreSqReplacementTests : IAsyncLifetime
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-controller-" + Guid.NewGuid().ToString("N"));
    private readonly ECDsa[] _replicas = [.. Enumerable.Range(0, 4).Select(_ => ECDsa.Create(ECCurve.NamedCurves.nistP256))];
    private readonly ShiftedTime _time = new(TimeSpan.Zero);
    private SleepProcesses _processes = null!;
    private ControllerHost _host = null!;

    public async Task InitializeAsync()
    {
        _processes = new SleepProcesses(1, 7);
        await _processes.Orchestrator.StartAsync(ComponentRef.PreSq(1), CancellationToken.None);
        await _processes.Orchestrator.StartAsync(ComponentRef.PreSq(7), CancellationToken.None);
        var callers = _replicas.Select((k, i) => new PinnedCaller($"replica-sq-{i}", ManagementRole.Replica, k.ExportSubjectPublicKeyInfo(), i)).ToList();
        _host = ControllerHost.Create(new Uri($"http://127.0.0.1:{ControllerFixture.FreePort()}"), callers, Path.Combine(_dir, "audit"),
            _ => Task.FromResult(ControllerFixture.FakeComponents), NullLoggerFactory.Instance,
            new ControllerHostOptions { ReplicaFaults = 1, MaxReplacements = 2, ReplacementWindow = TimeSpan.FromMinutes(10), Time = _time },
            orchestrator: _processes.Orchestrator);
        await _host.StartAsync();
    }

    private async Task<bool> ReportAsync(int replica, uint preSq, long agreedTimeMs)
    {
        using var client = new ManagementClient(_host.Url, _replicas[replica]);
        var reply = await client.ReplicaNoticeAsync(ReplicaNoticeActions.RemovePreSq, preSq, agreedTimeMs);
        await _host.Replacement.WhenIdleAsync();
        return reply.Applied;
    }

    private List<AuditRecord> Replacements(int preSq) =>
        [.. _host.Audit.Tail(200).Where(r => r.Action == "replace-pre-sq" && r.Target.StartsWith($"pre-sq {preSq} ", StringComparison.Ordinal))];

    [Fact]
    public async Task F_plus_one_distinct_replicas_replace_the_pre_sq_once_and_f_or_a_repeating_replica_do_not()
    {
        var before = _processes.Pid(1);
        // f = 1 report, and the same (Byzantine) replica repeating it with fresh requests: one replica, nothing done.
        Assert.False(await ReportAsync(2, 1, 5000));
        Assert.False(await ReportAsync(2, 1, 5000));
        Assert.False(await ReportAsync(2, 1, 5000));
        Assert.Equal(before, _processes.Pid(1));
        Assert.Empty(Replacements(1));

        Assert.True(await ReportAsync(0, 1, 5000));
        var after = _processes.Pid(1);
        Assert.NotNull(after);
        Assert.NotEqual(before, after);
        var steps = Replacements(1);
        Assert.All(steps, r => Assert.Equal(("f+1 replicas [0, 2]", "pre-sq 1 (decided at agreed time 5000)"), (r.Actor, r.Target)));
        Assert.Collection(steps,
            r => Assert.Equal("stopping through local processes", r.Outcome),
            r => Assert.Equal($"stopped (stopped (pid {before})); starting a fresh process", r.Outcome),
            r => Assert.Equal($"replaced: started pid {after}, healthy", r.Outcome));
        var notice = Assert.Single(_host.Audit.Tail(200), r => r.Action == "replica-notice remove-pre-sq");
        Assert.True(notice.Sequence < steps[0].Sequence);
        Assert.StartsWith("recorded; replacing pre-sq-1 through local processes", notice.Outcome, StringComparison.Ordinal);

        // The other replicas' reports of the same notice arrive later: nothing more happens.
        Assert.False(await ReportAsync(1, 1, 5000));
        Assert.False(await ReportAsync(3, 1, 5000));
        Assert.Equal(after, _processes.Pid(1));
        Assert.Equal(3, Replacements(1).Count);
    }

    [Fact]
    public async Task Beyond_the_bound_the_controller_stops_replacing_raises_an_alarm_and_acts_again_after_the_window()
    {
        var alarms = 0;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (i, l) =>
        {
            if (i.Name == "sieveq.controller.orchestration_alarms")
            {
                l.EnableMeasurementEvents(i);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            foreach (var t in tags)
            {
                if (t.Key == "component" && (string?)t.Value == "pre-sq-7")
                {
                    Interlocked.Add(ref alarms, (int)value);
                }
            }
        });
        listener.Start();

        // Three decisions (three agreed times) within the window; the bound is 2.
        for (var t = 1; t <= 3; t++)
        {
            Assert.False(await ReportAsync(0, 7, t * 1000));
            Assert.True(await ReportAsync(3, 7, t * 1000));
        }
        var records = Replacements(7);
        Assert.Equal(2, records.Count(r => r.Outcome.StartsWith("replaced: ", StringComparison.Ordinal)));
        var refused = Assert.Single(records, r => r.Outcome.StartsWith("refused: ", StringComparison.Ordinal));
        Assert.Contains("alarm", refused.Outcome, StringComparison.Ordinal);
        Assert.Equal("pre-sq 7 (decided at agreed time 3000)", refused.Target);
        Assert.Equal(1, alarms);
        var pid = _processes.Pid(7);

        _time.Shift = TimeSpan.FromMinutes(11);
        Assert.False(await ReportAsync(1, 7, 4000));
        Assert.True(await ReportAsync(2, 7, 4000));
        Assert.NotEqual(pid, _processes.Pid(7));
        Assert.Equal(3, Replacements(7).Count(r => r.Outcome.StartsWith("replaced: ", StringComparison.Ordinal)));
    }

    public async Task DisposeAsync()
    {
        await _host.StopAsync();
        await _host.DisposeAsync();
        await _processes.DisposeAsync();
        foreach (var k in _replicas)
        {
            k.Dispose();
        }
        Directory.Delete(_dir, recursive: true);
    }
}
