using SieveQ.Policy.Hosting;
using System.Collections.Immutable;
using System.Net;
using System.Security.Cryptography;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Enforcement;
using SieveQ.Firewall.QGuard;
using SieveQ.Policy;

namespace SieveQ.Firewall.Tests;

/// <summary>The agent's firewall component against the real core in libsieveqfw.so.</summary>
public sealed class FirewallEnforcerTests : IDisposable
{
    private const string AgentImage = "/opt/sieveq/bin/sieveq-agent";
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);
    private readonly string dir = Directory.CreateTempSubdirectory("sieveq-fw-enforcer-").FullName;

    public void Dispose() => Directory.Delete(dir, recursive: true);

    private string WriteImage(string name, int seed)
    {
        var bytes = new byte[4096 + seed];
        new Random(seed).NextBytes(bytes);
        string path = Path.Combine(dir, name);
        File.WriteAllBytes(path, bytes);
        return path;
    }

    private static string Sha256Hex(string path) => Convert.ToHexString(SHA256.HashData(File.ReadAllBytes(path)));

    /// <summary>A monitor never started: its policy in force is the initial one, as after the agent's first read.</summary>
    private PolicyMonitor MonitorWith(AgentPolicy policy) =>
        new(new JsonFilePolicySource(Path.Combine(dir, "absent.json")), initial: policy);

    private static (CoreDriverBridge Bridge, FirewallEnforcer Enforcer) Start(PolicyMonitor monitor, ILoadSampler? sampler = null, QGuardSettings? qguard = null)
    {
        var options = new FirewallOptions
        {
            CoreLibraryPath = NativeLibraryFixture.LibraryPath,
            AgentImagePath = AgentImage,
            QGuard = qguard ?? new QGuardSettings { Interval = TimeSpan.FromHours(1) },
        };
        var (bridge, why) = DriverBridgeSelection.TryOpen(options, Microsoft.Extensions.Logging.Abstractions.NullLoggerFactory.Instance);
        Assert.True(bridge is CoreDriverBridge, why);
        var idle = sampler ?? new HostLoadSampler(new ScriptedCpu(), () => 0, () => 0);
        return ((CoreDriverBridge)bridge!, new FirewallEnforcer(bridge, null, monitor, idle, options));
    }

    private static async Task<T> EventuallyAsync<T>(Func<Task<T>> probe, Func<T, bool> done)
    {
        using var limit = new CancellationTokenSource(Patience);
        while (true)
        {
            T value = await probe();
            if (done(value))
            {
                return value;
            }
            await Task.Delay(10, limit.Token);
        }
    }

    [Fact]
    public async Task Policy_pushed_from_the_agent_policy_gives_the_expected_verdicts()
    {
        string app = WriteImage("app", 1);
        var agentPolicy = new AgentPolicy
        {
            ApplicationWhitelist = [new WhitelistEntry(app, Sha256Hex(app))],
            PreSqEndpoints = ["https://10.1.2.3:7443/"],
            DefaultRateLimits = new RateLimits(1000, 2000, 50),
        };
        using var monitor = MonitorWith(agentPolicy);
        var (bridge, enforcer) = Start(monitor);
        await using var _ = enforcer;
        await enforcer.StartAsync(CancellationToken.None);

        var stats = await bridge.GetStatisticsAsync(CancellationToken.None);
        Assert.Equal(1ul, stats.PolicySerial);
        Assert.Equal(2u, stats.PolicyRules); // the whitelisted app's allow-all, the agent's pre-SQ rule
        Assert.Equal((uint)AgentEndpointPolicy.LevelCount, stats.LevelCount);

        var anywhere = new ConnectionQuery { ImagePath = app, Remote = IPAddress.Parse("203.0.113.9"), Port = 22, ProcessKey = 5 };
        var unhashed = await bridge.ExplainAsync(anywhere, CancellationToken.None);
        Assert.Equal((Verdict.Pend, DecisionReason.NeedsHash), (unhashed.Verdict, unhashed.Reason));

        await bridge.AttestAsync(5, Convert.FromHexString(Sha256Hex(app)), CancellationToken.None);
        var allowed = await bridge.ExplainAsync(anywhere, CancellationToken.None);
        Assert.Equal((Verdict.Allow, DecisionReason.Rule, 0u), (allowed.Verdict, allowed.Reason, allowed.ClassId));
        var udp = await bridge.ExplainAsync(anywhere with { Protocol = 17, Port = 53 }, CancellationToken.None);
        Assert.Equal(Verdict.Allow, udp.Verdict);

        await bridge.AttestAsync(6, SHA256.HashData("tampered"u8), CancellationToken.None);
        var tampered = await bridge.ExplainAsync(anywhere with { ProcessKey = 6 }, CancellationToken.None);
        Assert.Equal((Verdict.Block, DecisionReason.HashMismatch), (tampered.Verdict, tampered.Reason));

        var stranger = await bridge.ExplainAsync(anywhere with { ImagePath = "/usr/bin/nc", ProcessKey = 7 }, CancellationToken.None);
        Assert.Equal((Verdict.Block, DecisionReason.UnknownApp), (stranger.Verdict, stranger.Reason));

        var toSieve = new ConnectionQuery { ImagePath = AgentImage, Remote = IPAddress.Parse("10.1.2.3"), Port = 7443, ProcessKey = 8 };
        var sieve = await bridge.ExplainAsync(toSieve, CancellationToken.None);
        Assert.Equal((Verdict.Allow, DecisionReason.Rule, 1u), (sieve.Verdict, sieve.Reason, sieve.ClassId));
        var elsewhere = await bridge.ExplainAsync(toSieve with { Remote = IPAddress.Parse("10.1.2.4") }, CancellationToken.None);
        Assert.Equal((Verdict.Block, DecisionReason.NoRule), (elsewhere.Verdict, elsewhere.Reason));

        // Audit mode from Group Policy: the stranger is let through and flagged, under a newer serial.
        var audit = await enforcer.ApplyAsync(agentPolicy with { DriverMode = DriverMode.Audit }, CancellationToken.None);
        Assert.True(audit!.Accepted, audit.StatusName);
        var audited = await bridge.ExplainAsync(anywhere with { ImagePath = "/usr/bin/nc", ProcessKey = 7 }, CancellationToken.None);
        Assert.Equal((Verdict.Allow, true), (audited.Verdict, audited.Audited));

        var counters = await enforcer.GetCountersAsync(CancellationToken.None);
        Assert.Equal(1, counters["firewall.available"]);
        Assert.Equal(2, counters["firewall.policy_pushes"]);
        Assert.Equal(2, counters["firewall.policy_serial"]);
        // The mode of the policy the driver took last (audit), for the console's driver fleet page.
        Assert.Equal((long)DriverMode.Audit, counters["firewall.mode"]);
    }

    [Fact]
    public async Task A_policy_the_driver_cannot_take_leaves_the_running_one_and_is_counted()
    {
        string app = WriteImage("app", 2);
        using var monitor = MonitorWith(new AgentPolicy { ApplicationWhitelist = [new WhitelistEntry(app, Sha256Hex(app))] });
        var (bridge, enforcer) = Start(monitor);
        await using var _ = enforcer;
        await enforcer.StartAsync(CancellationToken.None);

        // Group Policy allows image paths up to 4096 characters; the driver's identities hold 1024 bytes.
        string longPath = "/" + new string('a', 2000);
        var refused = await enforcer.ApplyAsync(new AgentPolicy { ApplicationWhitelist = [new WhitelistEntry(longPath, Sha256Hex(app))] }, CancellationToken.None);

        Assert.False(refused!.Accepted);
        Assert.Equal(1ul, (await bridge.GetStatisticsAsync(CancellationToken.None)).PolicySerial);
        Assert.Equal(1, (await enforcer.GetCountersAsync(CancellationToken.None))["firewall.policy_rejected"]);
    }

    [Fact]
    public async Task A_new_identity_event_is_attested_with_the_real_sha256_of_the_image()
    {
        string app = WriteImage("app", 3);
        string impostor = WriteImage("impostor", 4);
        // The impostor sits at a whitelisted path but its bytes are not the whitelisted ones.
        using var monitor = MonitorWith(new AgentPolicy
        {
            ApplicationWhitelist = [new WhitelistEntry(app, Sha256Hex(app)), new WhitelistEntry(impostor, Sha256Hex(app))],
        });
        var (bridge, enforcer) = Start(monitor);
        await using var _ = enforcer;
        await enforcer.StartAsync(CancellationToken.None);

        var connect = new ConnectionQuery { ImagePath = app, Remote = IPAddress.Parse("198.51.100.7"), Port = 443, ProcessKey = 41, ProcessId = 1000 };
        Assert.Equal(Verdict.Pend, bridge.Authorize(connect).Verdict);
        Assert.Equal(Verdict.Pend, bridge.Authorize(connect with { ImagePath = impostor, ProcessKey = 42 }).Verdict);

        // Nothing in the test attests: only the enforcer's event loop, hashing the files, can change these.
        var genuine = await EventuallyAsync(() => bridge.ExplainAsync(connect, CancellationToken.None), d => d.Reason != DecisionReason.NeedsHash);
        var fake = await EventuallyAsync(() => bridge.ExplainAsync(connect with { ImagePath = impostor, ProcessKey = 42 }, CancellationToken.None),
            d => d.Reason != DecisionReason.NeedsHash);

        Assert.Equal((Verdict.Allow, DecisionReason.Rule), (genuine.Verdict, genuine.Reason));
        Assert.Equal((Verdict.Block, DecisionReason.HashMismatch), (fake.Verdict, fake.Reason));
        var counters = await enforcer.GetCountersAsync(CancellationToken.None);
        Assert.Equal(2, counters["firewall.attested"]);
        Assert.Equal(0, counters["firewall.attest_failed"]);
    }

    [Fact]
    public async Task Scripted_high_load_raises_the_level_through_the_sampler_and_low_load_lowers_it()
    {
        string stat = Path.Combine(dir, "stat");
        var cpu = new ProcStatFile(stat);
        cpu.Advance(busy: 0, idle: 0);
        long queued = 0;
        var sampler = new HostLoadSampler(new ProcStatCpuMeter(stat), () => Interlocked.Read(ref queued), () => 0);
        var qguard = new QGuardSettings { Interval = TimeSpan.FromMilliseconds(5), Hold = TimeSpan.Zero, Smoothing = 1 };
        using var monitor = MonitorWith(new AgentPolicy());
        var (bridge, enforcer) = Start(monitor, sampler, qguard);
        await using var _ = enforcer;
        await enforcer.StartAsync(CancellationToken.None);
        Assert.Equal(0u, (await bridge.GetStatisticsAsync(CancellationToken.None)).Level);

        // Every jiffy busy between samples: CPU fraction 1, above the 0.9 overload point.
        using (cpu.Keep(busyPerStep: 1000, idlePerStep: 0))
        {
            var top = await EventuallyAsync(() => bridge.GetStatisticsAsync(CancellationToken.None), s => s.Level == 2);
            Assert.Equal(2u, top.Level);
        }
        // A new policy keeps the level QGuard chose.
        await enforcer.ApplyAsync(new AgentPolicy(), CancellationToken.None);
        Assert.Equal(2u, (await bridge.GetStatisticsAsync(CancellationToken.None)).Level);

        using (cpu.Keep(busyPerStep: 0, idlePerStep: 1000))
        {
            await EventuallyAsync(() => bridge.GetStatisticsAsync(CancellationToken.None), s => s.Level == 0);
        }
        // The queue alone (idle CPU) is an overload indicator too.
        Interlocked.Exchange(ref queued, 10_000);
        using (cpu.Keep(busyPerStep: 0, idlePerStep: 1000))
        {
            await EventuallyAsync(() => bridge.GetStatisticsAsync(CancellationToken.None), s => s.Level >= 1);
        }
        var counters = await enforcer.GetCountersAsync(CancellationToken.None);
        Assert.True(counters["firewall.level_switches"] >= 5);
    }

    [Fact]
    public async Task Without_the_library_the_agent_runs_without_a_firewall_and_says_so()
    {
        var options = new FirewallOptions { CoreLibraryPath = Path.Combine(dir, "libsieveqfw.so") };
        var (bridge, why) = DriverBridgeSelection.TryOpen(options, Microsoft.Extensions.Logging.Abstractions.NullLoggerFactory.Instance);
        Assert.Null(bridge);
        Assert.Contains("libsieveqfw.so", why, StringComparison.Ordinal);

        await using var enforcer = new FirewallEnforcer(null, why, null, new HostLoadSampler(new ScriptedCpu(), () => 0, () => 0), options);
        await enforcer.StartAsync(CancellationToken.None);
        var counters = await enforcer.GetCountersAsync(CancellationToken.None);
        Assert.Equal(0, counters["firewall.available"]);
        Assert.Null(await enforcer.ApplyAsync(new AgentPolicy(), CancellationToken.None));
    }

    [Fact]
    public void Proc_stat_aggregate_line_counts_idle_and_iowait_as_not_busy()
    {
        var (busy, total) = ProcStatCpuMeter.Parse("cpu  100 5 50 800 40 3 2 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n");
        Assert.Equal((160ul, 1000ul), (busy, total));
        Assert.Throws<FormatException>(() => ProcStatCpuMeter.Parse("intr 1 2 3\n"));
    }

    private sealed class ScriptedCpu : ICpuMeter
    {
        public ValueTask<double> ReadAsync(CancellationToken cancellationToken) => ValueTask.FromResult(0.0);
    }

    /// <summary>A /proc/stat whose counters the test advances, replaced atomically so readers never see half a file.</summary>
    private sealed class ProcStatFile(string path)
    {
        private long busy, idle;

        public void Advance(long busy, long idle)
        {
            this.busy += busy;
            this.idle += idle;
            string tmp = path + ".tmp";
            File.WriteAllText(tmp, $"cpu  {this.busy} 0 0 {this.idle} 0 0 0 0 0 0\n");
            File.Move(tmp, path, overwrite: true);
        }

        /// <summary>Advances the counters every millisecond until disposed.</summary>
        public IDisposable Keep(long busyPerStep, long idlePerStep)
        {
            var stop = new CancellationTokenSource();
            var loop = Task.Run(async () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    Advance(busyPerStep, idlePerStep);
                    try
                    {
                        await Task.Delay(1, stop.Token);
                    }
                    catch (OperationCanceledException)
                    {
                        return;
                    }
                }
            });
            return new Stopper(stop, loop);
        }

        private sealed class Stopper(CancellationTokenSource stop, Task loop) : IDisposable
        {
            public void Dispose()
            {
                stop.Cancel();
                loop.GetAwaiter().GetResult();
                stop.Dispose();
            }
        }
    }
}
