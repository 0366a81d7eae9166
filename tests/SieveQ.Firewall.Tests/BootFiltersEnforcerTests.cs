using System.ComponentModel;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Diagnostics;
using SieveQ.Firewall.Enforcement;
using SieveQ.Firewall.QGuard;
using SieveQ.Policy;
using SieveQ.Policy.Hosting;

namespace SieveQ.Firewall.Tests;

/// <summary>
/// The enforcer bringing the boot-time filters to the policy's setting, on the real core. The bridge below passes
/// everything to the core's bridge and records the boot-time filter requests; where a test needs the Windows
/// driver's answers (stored, BFE not running, a failing handle) it gives them, as BootFilterMessages reads them.
/// </summary>
public sealed class BootFiltersEnforcerTests : IDisposable
{
    private readonly string dir = Directory.CreateTempSubdirectory("sieveq-fw-bootenf-").FullName;

    public void Dispose() => Directory.Delete(dir, recursive: true);

    /// <summary>Stands for sieveqfw.sys where it matters here: what BFE holds and what the driver answers.</summary>
    private sealed class BootRecordingBridge(IDriverBridge core) : IDriverBridge
    {
        public List<bool> Requests { get; } = [];

        /// <summary>The driver's answer to the next requests; null: a driver with BFE running (16 stored, or 0).</summary>
        public Func<bool, BootFiltersResult>? Answer { get; set; }

        public Exception? Throw { get; set; }

        public Task<BootFiltersResult> SetBootFiltersAsync(bool enabled, CancellationToken cancellationToken)
        {
            Requests.Add(enabled);
            if (Throw is { } e)
            {
                return Task.FromException<BootFiltersResult>(e);
            }
            return Task.FromResult(Answer?.Invoke(enabled) ?? BootFilterMessages.Reply(enabled, Stored(enabled), 16));
        }

        private static byte[] Stored(bool enabled)
        {
            var reply = new byte[16];
            BitConverter.TryWriteBytes(reply.AsSpan(4), enabled ? 1u : 0u);
            BitConverter.TryWriteBytes(reply.AsSpan(8), enabled ? 16u : 0u);
            return reply;
        }

        public Task<PolicyPushResult> PushPolicyAsync(ReadOnlyMemory<byte> blob, CancellationToken cancellationToken) => core.PushPolicyAsync(blob, cancellationToken);
        public Task<FirewallStatistics> GetStatisticsAsync(CancellationToken cancellationToken) => core.GetStatisticsAsync(cancellationToken);
        public Task SetLevelAsync(int level, CancellationToken cancellationToken) => core.SetLevelAsync(level, cancellationToken);
        public IAsyncEnumerable<FirewallEvent> ReadEventsAsync(CancellationToken cancellationToken) => core.ReadEventsAsync(cancellationToken);
        public Task AttestAsync(ulong processKey, ReadOnlyMemory<byte> sha256, CancellationToken cancellationToken) => core.AttestAsync(processKey, sha256, cancellationToken);
        public Task BindServiceAsync(ulong processKey, string serviceName, CancellationToken cancellationToken) => core.BindServiceAsync(processKey, serviceName, cancellationToken);
        public Task<FirewallDecision> ExplainAsync(ConnectionQuery query, CancellationToken cancellationToken) => core.ExplainAsync(query, cancellationToken);
        public ValueTask DisposeAsync() => core.DisposeAsync();
    }

    private static FirewallOptions Options => new()
    {
        CoreLibraryPath = NativeLibraryFixture.LibraryPath,
        AgentImagePath = "/opt/sieveq/bin/sieveq-agent",
        QGuard = new QGuardSettings { Interval = TimeSpan.FromHours(1) },
    };

    private static IDriverBridge Core()
    {
        var (bridge, why) = DriverBridgeSelection.TryOpen(Options, NullLoggerFactory.Instance);
        Assert.True(bridge is CoreDriverBridge, why);
        return bridge!;
    }

    private FirewallEnforcer Enforcer(IDriverBridge bridge, PolicyMonitor monitor) =>
        new(bridge, null, monitor, new IdleSampler(), Options);

    private sealed class IdleSampler : ILoadSampler
    {
        public ValueTask<LoadSample> SampleAsync(CancellationToken cancellationToken) => ValueTask.FromResult(new LoadSample(0, 0, 0));
    }

    private PolicyMonitor MonitorWith(AgentPolicy policy, string? file = null) =>
        new(new JsonFilePolicySource(file ?? Path.Combine(dir, "absent.json")), initial: policy, settleDelay: TimeSpan.FromMilliseconds(20));

    private static async Task<long> Counter(FirewallEnforcer enforcer, string name) => (await enforcer.GetCountersAsync(CancellationToken.None))[name];

    [Fact]
    public async Task Applied_at_start_and_then_only_when_the_setting_changes()
    {
        var bridge = new BootRecordingBridge(Core());
        using var monitor = MonitorWith(new AgentPolicy());
        await using var enforcer = Enforcer(bridge, monitor);

        await enforcer.StartAsync(CancellationToken.None);
        // off at start too: filters an earlier policy stored must not outlive a policy that says off
        Assert.Equal([false], bridge.Requests);
        Assert.Equal(0, await Counter(enforcer, "firewall.boot_filters"));

        await enforcer.ApplyAsync(new AgentPolicy { DriverMode = DriverMode.Audit }, CancellationToken.None);
        Assert.Equal([false], bridge.Requests);

        await enforcer.ApplyAsync(new AgentPolicy { BootTimeFilters = true }, CancellationToken.None);
        await enforcer.ApplyAsync(new AgentPolicy { BootTimeFilters = true, DriverMode = DriverMode.Audit }, CancellationToken.None);
        Assert.Equal([false, true], bridge.Requests);
        Assert.Equal(16u, enforcer.BootFilters!.StoredFilters);
        Assert.Equal(1, await Counter(enforcer, "firewall.boot_filters"));

        await enforcer.ApplyAsync(new AgentPolicy(), CancellationToken.None);
        Assert.Equal([false, true, false], bridge.Requests);
        Assert.Equal(0, await Counter(enforcer, "firewall.boot_filters"));
        Assert.Equal(3, await Counter(enforcer, "firewall.boot_filter_changes"));
        Assert.Equal(0, await Counter(enforcer, "firewall.boot_filter_failures"));
    }

    [Fact]
    public async Task A_policy_file_turning_it_on_reaches_the_driver()
    {
        string file = Path.Combine(dir, "policy.json");
        var bridge = new BootRecordingBridge(Core());
        using var source = new JsonFilePolicySource(file);
        using var monitor = new PolicyMonitor(source, settleDelay: TimeSpan.FromMilliseconds(20));
        await using var enforcer = Enforcer(bridge, monitor);
        await enforcer.StartAsync(CancellationToken.None);

        await File.WriteAllTextAsync(file, "{\"SOFTWARE\\\\Policies\\\\SieveQ\": {\"BootTimeFilters\": 1}}");
        Assert.True(monitor.Refresh().IsValid);

        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (enforcer.BootFilters is not { Enabled: true })
        {
            await Task.Delay(10, limit.Token);
        }
        Assert.Equal([false, true], bridge.Requests);
        Assert.Equal(2ul, (await bridge.GetStatisticsAsync(CancellationToken.None)).PolicySerial);
    }

    [Fact]
    public async Task BFE_not_running_is_reported_the_policy_still_pushed_and_the_change_tried_again_with_the_next_policy()
    {
        var bridge = new BootRecordingBridge(Core());
        using var monitor = MonitorWith(new AgentPolicy());
        await using var enforcer = Enforcer(bridge, monitor);
        await enforcer.StartAsync(CancellationToken.None);
        bridge.Answer = on => BootFilterMessages.Reply(on, [0xA3, 0x00, 0x00, 0xC0, 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0], 16);
        using var changes = new BootFilterChangeProbe();

        var pushed = await enforcer.ApplyAsync(new AgentPolicy { BootTimeFilters = true, DriverMode = DriverMode.Audit }, CancellationToken.None);

        Assert.True(pushed!.Accepted, pushed.StatusName);
        Assert.Equal((long)DriverMode.Audit, await Counter(enforcer, "firewall.mode"));
        Assert.Equal(BootFilterFailure.BfeNotRunning, enforcer.BootFilters!.Failure);
        Assert.Equal(1, await Counter(enforcer, "firewall.boot_filter_failures"));
        Assert.Equal(0, await Counter(enforcer, "firewall.boot_filters")); // still what the driver last confirmed
        Assert.Contains(("True", "BfeNotRunning"), changes.Seen);

        bridge.Answer = null;
        await enforcer.ApplyAsync(new AgentPolicy { BootTimeFilters = true, DriverMode = DriverMode.Audit }, CancellationToken.None);
        Assert.Equal([false, true, true], bridge.Requests);
        Assert.Equal(1, await Counter(enforcer, "firewall.boot_filters"));
    }

    [Fact]
    public async Task A_failing_handle_does_not_fail_the_policy_push()
    {
        var bridge = new BootRecordingBridge(Core()) { Throw = new Win32Exception(6) };
        using var monitor = MonitorWith(new AgentPolicy { BootTimeFilters = true });
        await using var enforcer = Enforcer(bridge, monitor);

        await enforcer.StartAsync(CancellationToken.None);

        Assert.Equal(1ul, (await bridge.GetStatisticsAsync(CancellationToken.None)).PolicySerial);
        Assert.False(enforcer.BootFilters!.Succeeded);
        Assert.Contains("Win32Exception", enforcer.BootFilters.Message, StringComparison.Ordinal);
        Assert.Equal(1, await Counter(enforcer, "firewall.boot_filter_failures"));
        Assert.Equal(-1, await Counter(enforcer, "firewall.boot_filters"));
    }

    [Fact]
    public async Task A_driver_too_old_for_boot_filters_fails_on_and_counts_as_off()
    {
        var bridge = new BootRecordingBridge(Core()) { Answer = on => BootFilterMessages.Error(on, 1)! };
        using var monitor = MonitorWith(new AgentPolicy());
        await using var enforcer = Enforcer(bridge, monitor);

        await enforcer.StartAsync(CancellationToken.None);
        Assert.Equal(0, await Counter(enforcer, "firewall.boot_filter_failures"));
        Assert.Equal(0, await Counter(enforcer, "firewall.boot_filters"));

        var pushed = await enforcer.ApplyAsync(new AgentPolicy { BootTimeFilters = true }, CancellationToken.None);
        Assert.True(pushed!.Accepted);
        Assert.Equal(BootFilterFailure.NotSupportedByDriver, enforcer.BootFilters!.Failure);
        Assert.Equal(1, await Counter(enforcer, "firewall.boot_filter_failures"));
    }

    [Fact]
    public async Task On_the_portable_core_on_is_reported_as_not_on_this_platform_and_the_policy_still_runs()
    {
        using var monitor = MonitorWith(new AgentPolicy { BootTimeFilters = true });
        var core = Core();
        await using var enforcer = Enforcer(core, monitor);

        await enforcer.StartAsync(CancellationToken.None);

        Assert.Equal(1ul, (await core.GetStatisticsAsync(CancellationToken.None)).PolicySerial);
        Assert.Equal(BootFilterFailure.NotOnThisPlatform, enforcer.BootFilters!.Failure);
        Assert.Equal(1, await Counter(enforcer, "firewall.boot_filter_failures"));
    }

    /// <summary>sieveq.fw.boot_filter_changes as a metrics listener sees it (enabled, outcome).</summary>
    private sealed class BootFilterChangeProbe : IDisposable
    {
        private readonly MeterListener listener = new();
        private readonly List<(string, string)> seen = [];

        public BootFilterChangeProbe()
        {
            listener.InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == FirewallMetrics.MeterName && instrument.Name == "sieveq.fw.boot_filter_changes")
                {
                    l.EnableMeasurementEvents(instrument);
                }
            };
            listener.SetMeasurementEventCallback<long>((_, _, tags, _) =>
            {
                string enabled = "", outcome = "";
                foreach (var tag in tags)
                {
                    if (tag.Key == "enabled")
                    {
                        enabled = tag.Value?.ToString() ?? "";
                    }
                    else if (tag.Key == "outcome")
                    {
                        outcome = tag.Value?.ToString() ?? "";
                    }
                }
                lock (seen)
                {
                    seen.Add((enabled, outcome));
                }
            });
            listener.Start();
        }

        public IReadOnlyList<(string, string)> Seen
        {
            get
            {
                lock (seen)
                {
                    return [.. seen];
                }
            }
        }

        public void Dispose() => listener.Dispose();
    }
}
