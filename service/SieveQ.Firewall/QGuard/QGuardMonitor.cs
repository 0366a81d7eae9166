using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Diagnostics;

namespace SieveQ.Firewall.QGuard;

/// <summary>Samples the host, runs the controller and switches the driver's hierarchy level.</summary>
public sealed class QGuardMonitor
{
    private readonly IDriverBridge bridge;
    private readonly ILoadSampler sampler;
    private readonly QGuardController controller;
    private readonly QGuardSettings settings;
    private readonly TimeProvider time;
    private readonly ILogger logger;

    public QGuardMonitor(IDriverBridge bridge, ILoadSampler sampler, QGuardSettings settings, int levelCount,
        TimeProvider? time = null, ILogger<QGuardMonitor>? logger = null)
    {
        this.bridge = bridge;
        this.sampler = sampler;
        this.settings = settings;
        controller = new QGuardController(settings, levelCount);
        this.time = time ?? TimeProvider.System;
        this.logger = (ILogger?)logger ?? NullLogger.Instance;
    }

    public int Level => controller.Level;

    /// <summary>One sampling step; returns the level it switched to, if any.</summary>
    public async Task<int?> StepAsync(CancellationToken cancellationToken)
    {
        LoadSample sample = await sampler.SampleAsync(cancellationToken).ConfigureAwait(false);
        int? next = controller.Observe(sample, time.GetElapsedTime(0));
        FirewallMetrics.LoadIndex.Record(controller.LoadIndex);
        if (next is int level)
        {
            await bridge.SetLevelAsync(level, cancellationToken).ConfigureAwait(false);
            FirewallMetrics.LevelSwitches.Add(1);
            logger.LogInformation("QGuard: load index {Index:F2}, hierarchy level now {Level}", controller.LoadIndex, level);
        }
        return next;
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            await StepAsync(cancellationToken).ConfigureAwait(false);
            await Task.Delay(settings.Interval, time, cancellationToken).ConfigureAwait(false);
        }
    }
}
