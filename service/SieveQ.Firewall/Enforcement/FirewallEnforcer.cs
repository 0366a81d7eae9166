using SieveQ.Policy.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Diagnostics;
using SieveQ.Firewall.Identity;
using SieveQ.Firewall.Policy;
using SieveQ.Firewall.QGuard;
using SieveQ.Policy;

namespace SieveQ.Firewall.Enforcement;

/// <summary>
/// The agent's layer-0 side at run time: keeps the driver's policy equal to the agent's effective policy,
/// answers the driver's new-identity events with image hashes, and lets QGuard switch the hierarchy level
/// from the host's load. Without a driver (bridge null) it only reports that, in its counters.
/// </summary>
public sealed class FirewallEnforcer : IAsyncDisposable
{
    private readonly IDriverBridge? bridge;
    private readonly string? unavailable;
    private readonly PolicyMonitor? policy;
    private readonly FirewallOptions options;
    private readonly ILogger logger;
    private readonly QGuardMonitor? qguard;
    private readonly IdentityAttestor? attestor;
    private readonly SemaphoreSlim pushGate = new(1, 1);
    private readonly CancellationTokenSource stop = new();
    private readonly List<Task> loops = [];
    private readonly Lock loopsGate = new();
    private ulong serial;
    private long pushes, rejected, levelSwitches, loopFailures;
    private long bootFilterChanges, bootFilterFailures;

    // What the driver last confirmed of the boot-time filters (null: nothing confirmed since start), and its last
    // answer. Under pushGate.
    private bool? bootFiltersInForce;
    private BootFiltersResult? bootFiltersOutcome;
    private long bootFiltersState = -1; // bootFiltersInForce for the counters, read outside pushGate

    // The driver mode of the policy the driver last accepted (DriverMode as a number); -1 until one is accepted.
    private long acceptedMode = -1;
    private int stopped;

    /// <param name="bridge">The driver; null when this host has none (<paramref name="unavailable"/> says why).</param>
    /// <param name="policy">The agent's effective policy, followed as it changes; null: the not-configured policy.</param>
    public FirewallEnforcer(IDriverBridge? bridge, string? unavailable, PolicyMonitor? policy, ILoadSampler sampler,
        FirewallOptions options, ILoggerFactory? logs = null, ImageHashCache? hashes = null)
    {
        ArgumentNullException.ThrowIfNull(sampler);
        ArgumentNullException.ThrowIfNull(options);
        if (options.MaxQueuedAttestations < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(options), "MaxQueuedAttestations must be at least 1");
        }
        logs ??= NullLoggerFactory.Instance;
        this.bridge = bridge;
        this.unavailable = bridge is null ? unavailable ?? "no driver" : null;
        this.policy = policy;
        this.options = options;
        logger = logs.CreateLogger<FirewallEnforcer>();
        if (bridge is not null)
        {
            qguard = new QGuardMonitor(bridge, sampler, options.QGuard, AgentEndpointPolicy.LevelCount, logger: logs.CreateLogger<QGuardMonitor>());
            attestor = new IdentityAttestor(bridge, hashes ?? new ImageHashCache(), options.MaxQueuedAttestations, logger);
        }
    }

    public bool Available => bridge is not null;

    /// <summary>The QGuard level the monitor last set (0 without a driver).</summary>
    public int Level => qguard?.Level ?? 0;

    /// <summary>Pushes the policy in force, then follows policy changes, driver events and the host's load.</summary>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        if (bridge is null)
        {
            logger.LogWarning("Running without the firewall: {Reason}", unavailable);
            return;
        }
        await ApplyAsync(policy?.Policy ?? AgentPolicy.NotConfigured, cancellationToken).ConfigureAwait(false);
        if (policy is not null)
        {
            policy.Applied += OnPolicyApplied;
        }
        Track(ReadEventsAsync(stop.Token));
        Track(attestor!.RunAsync(stop.Token));
        Track(RunQGuardAsync(stop.Token));
    }

    /// <summary>
    /// Maps, compiles and pushes one agent policy; a refused one leaves the running policy in force. Then brings the
    /// boot-time filters to the policy's setting when it differs from what the driver last confirmed; the outcome of
    /// that is <see cref="BootFilters"/>, and a failure there does not fail the push.
    /// </summary>
    public async Task<PolicyPushResult?> ApplyAsync(AgentPolicy agentPolicy, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(agentPolicy);
        if (bridge is null)
        {
            return null;
        }
        await pushGate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var result = await PushAsync(agentPolicy, cancellationToken).ConfigureAwait(false);
            await ApplyBootFiltersAsync(agentPolicy.BootTimeFilters, cancellationToken).ConfigureAwait(false);
            return result;
        }
        finally
        {
            pushGate.Release();
        }
    }

    /// <summary>The driver's last answer about the boot-time filters; null before the first request.</summary>
    public BootFiltersResult? BootFilters => Volatile.Read(ref bootFiltersOutcome);

    private async Task<PolicyPushResult> PushAsync(AgentPolicy agentPolicy, CancellationToken cancellationToken)
    {
        byte[] blob;
        try
        {
            blob = PolicyCompiler.Compile(AgentEndpointPolicy.From(agentPolicy, ++serial, options.AgentImagePath));
        }
        catch (PolicyException e)
        {
            Interlocked.Increment(ref rejected);
            logger.LogError("The agent policy cannot be enforced by the driver; the previous one stays: {Error}", e.Message);
            return new PolicyPushResult(false, -1, e.Message, 0);
        }
        var result = await bridge!.PushPolicyAsync(blob, cancellationToken).ConfigureAwait(false);
        Interlocked.Increment(ref result.Accepted ? ref pushes : ref rejected);
        if (result.Accepted)
        {
            Interlocked.Exchange(ref acceptedMode, (long)agentPolicy.DriverMode);
        }
        // A new policy starts at its initial level; QGuard's view of the load has not changed.
        if (result.Accepted && qguard is { Level: > 0 } q)
        {
            await bridge.SetLevelAsync(q.Level, cancellationToken).ConfigureAwait(false);
        }
        return result;
    }

    // Sent at start whatever the setting, so filters stored under an earlier policy are removed when the policy now
    // says off; afterwards only when the setting differs from what the driver confirmed, so a failed change is tried
    // again with the next policy the agent applies.
    private async Task ApplyBootFiltersAsync(bool enabled, CancellationToken cancellationToken)
    {
        if (bootFiltersInForce == enabled)
        {
            return;
        }
        BootFiltersResult outcome;
        try
        {
            outcome = await bridge!.SetBootFiltersAsync(enabled, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException or IOException)
        {
            // The handle failing is reported like any other failed change: the policy push it follows stands.
            outcome = new BootFiltersResult(enabled, BootFilterFailure.Refused, null, 0, $"{e.GetType().Name}: {e.Message}");
        }
        Volatile.Write(ref bootFiltersOutcome, outcome);
        Interlocked.Increment(ref bootFilterChanges);
        FirewallMetrics.BootFilterChanges.Add(1, new KeyValuePair<string, object?>("enabled", enabled),
            new KeyValuePair<string, object?>("outcome", outcome.Failure.ToString()));
        if (outcome.Succeeded)
        {
            bootFiltersInForce = enabled;
            Interlocked.Exchange(ref bootFiltersState, enabled ? 1 : 0);
            logger.LogInformation("Boot-time filters {State}: {Detail}", enabled ? "on" : "off", outcome.Message);
        }
        else if (!enabled && outcome.Failure is BootFilterFailure.NotSupportedByDriver)
        {
            // A driver that cannot store boot-time filters holds none: off is already the case.
            bootFiltersInForce = false;
            Interlocked.Exchange(ref bootFiltersState, 0);
            logger.LogInformation("Boot-time filters off: {Detail}", outcome.Message);
        }
        else
        {
            Interlocked.Increment(ref bootFilterFailures);
            logger.LogWarning("Boot-time filters not turned {State} ({Failure}): {Detail}; the rest of the policy is applied",
                enabled ? "on" : "off", outcome.Failure, outcome.Message);
        }
    }

    /// <summary>What the agent's Health reply shows of layer 0.</summary>
    public async Task<IReadOnlyDictionary<string, long>> GetCountersAsync(CancellationToken cancellationToken)
    {
        var c = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["firewall.available"] = bridge is null ? 0 : 1,
            ["firewall.policy_pushes"] = Interlocked.Read(ref pushes),
            ["firewall.policy_rejected"] = Interlocked.Read(ref rejected),
            ["firewall.level_switches"] = Interlocked.Read(ref levelSwitches),
            ["firewall.loop_failures"] = Interlocked.Read(ref loopFailures),
            ["firewall.boot_filter_changes"] = Interlocked.Read(ref bootFilterChanges),
            ["firewall.boot_filter_failures"] = Interlocked.Read(ref bootFilterFailures),
            // what the driver last confirmed: -1 nothing yet, 0 off, 1 on (a later failed change leaves it)
            ["firewall.boot_filters"] = Interlocked.Read(ref bootFiltersState),
        };
        if (bridge is null || attestor is null)
        {
            return c;
        }
        c["firewall.attested"] = attestor.Attested;
        c["firewall.attest_failed"] = attestor.Failed;
        c["firewall.attest_dropped"] = attestor.Dropped;
        var s = await bridge.GetStatisticsAsync(cancellationToken).ConfigureAwait(false);
        c["firewall.policy_serial"] = (long)s.PolicySerial;
        c["firewall.mode"] = Interlocked.Read(ref acceptedMode);
        c["firewall.policy_rules"] = s.PolicyRules;
        c["firewall.level"] = s.Level;
        c["firewall.authorized"] = (long)s.Authorized;
        c["firewall.allowed"] = (long)s.Allowed;
        c["firewall.blocked"] = (long)s.Blocked;
        c["firewall.pended"] = (long)s.Pended;
        c["firewall.pend_timeouts"] = (long)s.PendTimeouts;
        c["firewall.audited"] = (long)s.Audited;
        c["firewall.syn_dropped"] = (long)s.SynDropped;
        c["firewall.rate_limited"] = (long)s.RateLimited;
        c["firewall.level_dropped"] = (long)s.LevelDropped;
        c["firewall.flows_active"] = s.FlowsActive;
        c["firewall.events_dropped"] = (long)s.EventsDropped;
        c["firewall.processes_tracked"] = s.ProcessesTracked;
        c["firewall.processes_services"] = s.ProcessesServices;
        c["firewall.processes_evicted"] = (long)s.ProcessesEvicted;
        c["firewall.processes_refused"] = (long)s.ProcessesRefused;
        c["firewall.events_suppressed"] = (long)s.EventsSuppressed;
        return c;
    }

    // The monitor raises Applied on its own thread; the push is tracked so StopAsync waits for it.
    private void OnPolicyApplied(object? sender, PolicyAppliedEventArgs e) => Track(ApplyChangedAsync(e.Applied.Policy));

    private void Track(Task task)
    {
        lock (loopsGate)
        {
            loops.RemoveAll(t => t.IsCompleted);
            loops.Add(task);
        }
    }

    private async Task ApplyChangedAsync(AgentPolicy changed)
    {
        try
        {
            await ApplyAsync(changed, stop.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // stopping
        }
    }

    private async Task ReadEventsAsync(CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            try
            {
                await foreach (var ev in bridge!.ReadEventsAsync(cancellationToken).ConfigureAwait(false))
                {
                    if (ev.Type == FirewallEventType.NewIdentity)
                    {
                        attestor!.Offer(ev);
                    }
                }
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is InvalidOperationException or IOException or System.ComponentModel.Win32Exception)
            {
                // One failed read must not end event handling for the agent's lifetime.
                Interlocked.Increment(ref loopFailures);
                logger.LogError(e, "Reading firewall events failed; retrying");
                await PauseAsync(cancellationToken).ConfigureAwait(false);
            }
        }
    }

    private async Task RunQGuardAsync(CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            try
            {
                if (await qguard!.StepAsync(cancellationToken).ConfigureAwait(false) is not null)
                {
                    Interlocked.Increment(ref levelSwitches);
                }
                await Task.Delay(options.QGuard.Interval, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is InvalidOperationException or IOException or FormatException or ArgumentException or System.ComponentModel.Win32Exception)
            {
                Interlocked.Increment(ref loopFailures);
                logger.LogError(e, "QGuard sampling failed; retrying");
                await PauseAsync(cancellationToken).ConfigureAwait(false);
            }
        }
    }

    private static async Task PauseAsync(CancellationToken cancellationToken)
    {
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(1), cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // stopping
        }
    }

    public async Task StopAsync()
    {
        if (Interlocked.Exchange(ref stopped, 1) != 0)
        {
            return;
        }
        if (policy is not null)
        {
            policy.Applied -= OnPolicyApplied;
        }
        await stop.CancelAsync().ConfigureAwait(false);
        Task[] running;
        lock (loopsGate)
        {
            running = [.. loops];
        }
        await Task.WhenAll(running).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync().ConfigureAwait(false);
        if (bridge is not null)
        {
            await bridge.DisposeAsync().ConfigureAwait(false);
        }
        stop.Dispose();
        pushGate.Dispose();
    }
}
