using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Policy;
using SieveQ.Firewall.QGuard;

namespace SieveQ.Firewall.Tests;

public class QGuardTests
{
    private static readonly QGuardSettings Settings = new()
    {
        AcceptedCapacity = 1000,
        CpuOverload = 0.9,
        QueueOverload = 100,
        Smoothing = 0.5,
        RaiseAbove = 1.0,
        LowerBelow = 0.7,
        Hold = TimeSpan.FromSeconds(1),
    };

    private static LoadSample Accepted(double rate) => new(0.1, 0, rate);

    [Fact]
    public void Sustained_overload_raises_one_level_per_hold_time()
    {
        var c = new QGuardController(Settings, levelCount: 3);
        var switches = new List<(double At, int Level)>();
        for (int step = 0; step < 40; step++)
        {
            double t = step * 0.1;
            if (c.Observe(Accepted(2000), TimeSpan.FromSeconds(t)) is int level)
            {
                switches.Add((t, level));
            }
        }
        Assert.Equal([1, 2], switches.Select(s => s.Level));
        Assert.True(switches[1].At - switches[0].At >= 1.0 - 1e-9);
        Assert.Equal(2, c.Level);
    }

    [Fact]
    public void Load_between_the_thresholds_never_switches()
    {
        var c = new QGuardController(Settings, levelCount: 3, initialLevel: 1);
        for (int step = 0; step < 200; step++)
        {
            // oscillates between 0.75 and 0.95 of capacity: inside the hysteresis band
            double rate = step % 2 == 0 ? 750 : 950;
            Assert.Null(c.Observe(Accepted(rate), TimeSpan.FromSeconds(step * 0.1)));
        }
        Assert.Equal(1, c.Level);
    }

    [Fact]
    public void Underload_relaxes_and_any_single_indicator_can_trigger()
    {
        var c = new QGuardController(Settings, levelCount: 3, initialLevel: 2);
        int? last = null;
        for (int step = 0; step < 40; step++)
        {
            last = c.Observe(Accepted(100), TimeSpan.FromSeconds(step * 0.5)) ?? last;
        }
        Assert.Equal(0, c.Level);
        // queues alone past their overload point raise the level even at low CPU and rate
        var q = new QGuardController(Settings, levelCount: 2);
        Assert.Equal(1, q.Observe(new LoadSample(0.05, 500, 10), TimeSpan.Zero));
    }

    private sealed class ScriptedSampler(params LoadSample[] samples) : ILoadSampler
    {
        private int next;

        public ValueTask<LoadSample> SampleAsync(CancellationToken cancellationToken) =>
            ValueTask.FromResult(samples[Math.Min(next++, samples.Length - 1)]);
    }

    [Fact]
    public async Task Monitor_switches_the_driver_level()
    {
        NativeLibraryFixture.EnsureLoaded();
        await using var bridge = new CoreDriverBridge();
        var policy = await EndpointPolicy.LoadAsync(Path.Combine(NativeLibraryFixture.GoldenDirectory, "workstation.json"), CancellationToken.None);
        Assert.True((await bridge.PushPolicyAsync(PolicyCompiler.Compile(policy), CancellationToken.None)).Accepted);
        var monitor = new QGuardMonitor(bridge, new ScriptedSampler(Accepted(5000)), Settings with { Hold = TimeSpan.Zero }, levelCount: 3);

        Assert.Equal(1, await monitor.StepAsync(CancellationToken.None));
        Assert.Equal(1u, (await bridge.GetStatisticsAsync(CancellationToken.None)).Level);
        Assert.Equal(2, await monitor.StepAsync(CancellationToken.None));
        Assert.Equal(2u, (await bridge.GetStatisticsAsync(CancellationToken.None)).Level);
        Assert.Null(await monitor.StepAsync(CancellationToken.None)); /* already at the top */
    }
}
