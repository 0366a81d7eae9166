using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace SieveQ.Policy.Hosting;

/// <summary>
/// Keeps the agent's policy in force. On every change it reads the whole source, validates it and only then
/// swaps the one reference readers see; a policy that fails anywhere is never seen by them. A refused change
/// leaves the last good policy in force and raises the alarm: the <see cref="Rejected"/> event, an error in
/// the log and the <c>sieveq.policy.rejected</c> counter.
/// </summary>
public sealed class PolicyMonitor : IDisposable
{
    private readonly IPolicySource source;
    private readonly ILogger logger;
    private readonly TimeProvider time;
    private readonly TimeSpan settleDelay;
    // One refresh at a time, so an older read can never overwrite a newer one.
    private readonly Lock refreshGate = new();
    private readonly ITimer settleTimer;
    private AppliedPolicy current;
    private PolicyRejectedEventArgs? alarm;
    private PolicyEvaluation? lastEvaluation;
    private bool started;
    private volatile bool disposed;

    /// <param name="initial">What is in force before the first read: the agent's cached last good policy, if it keeps one.</param>
    /// <param name="settleDelay">Quiet time after a change notice before reading, so a writer can finish (default 250 ms).</param>
    public PolicyMonitor(IPolicySource source, ILogger<PolicyMonitor>? logger = null, TimeProvider? time = null,
        AgentPolicy? initial = null, TimeSpan? settleDelay = null)
    {
        ArgumentNullException.ThrowIfNull(source);
        this.source = source;
        this.logger = (ILogger?)logger ?? NullLogger.Instance;
        this.time = time ?? TimeProvider.System;
        this.settleDelay = settleDelay ?? TimeSpan.FromMilliseconds(250);
        current = new AppliedPolicy(initial ?? AgentPolicy.NotConfigured, 0, null, null, this.time.GetUtcNow());
        settleTimer = this.time.CreateTimer(_ => OnSettled(), null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    public event EventHandler<PolicyAppliedEventArgs>? Applied;

    /// <summary>The alarm. Raised once per distinct refused content, not on every re-check of it.</summary>
    public event EventHandler<PolicyRejectedEventArgs>? Rejected;

    /// <summary>The policy in force. Always a complete, validated policy (or the initial one).</summary>
    public AppliedPolicy Current => Volatile.Read(ref current);

    public AgentPolicy Policy => Current.Policy;

    /// <summary>The standing alarm: the last refused change, until a valid policy is read again.</summary>
    public PolicyRejectedEventArgs? ActiveAlarm => Volatile.Read(ref alarm);

    /// <summary>Reads the source once, then follows its change notices.</summary>
    public void Start()
    {
        lock (refreshGate)
        {
            ObjectDisposedException.ThrowIf(disposed, this);
            if (started)
            {
                return;
            }
            started = true;
            // Subscribe before the first read so a change made during it is not lost.
            source.Changed += OnSourceChanged;
        }
        source.StartWatching();
        Refresh();
    }

    /// <summary>Reads, validates and, if valid and new, applies the policy now.</summary>
    public PolicyEvaluation Refresh()
    {
        lock (refreshGate)
        {
            ObjectDisposedException.ThrowIf(disposed, this);
            PolicySnapshot snapshot;
            try
            {
                snapshot = source.Read();
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // Sources promise not to throw for bad content; this is for the ones that break that promise.
                snapshot = PolicySnapshot.Failed(source.Name, $"reading the policy failed: {e.Message}", $"exception:{e.GetType().Name}:{e.Message}");
            }
            if (lastEvaluation is not null && snapshot.Fingerprint == lastEvaluation.Fingerprint)
            {
                return lastEvaluation;
            }
            var evaluation = PolicyLoader.Evaluate(snapshot);
            lastEvaluation = evaluation;
            if (evaluation.IsValid)
            {
                Apply(evaluation);
            }
            else
            {
                Reject(evaluation);
            }
            return evaluation;
        }
    }

    public void Dispose()
    {
        lock (refreshGate)
        {
            if (disposed)
            {
                return;
            }
            disposed = true;
            source.Changed -= OnSourceChanged;
            settleTimer.Dispose();
        }
    }

    private void Apply(PolicyEvaluation evaluation)
    {
        var previous = Current;
        bool hadAlarm = Interlocked.Exchange(ref alarm, null) is not null;
        foreach (string warning in evaluation.Warnings)
        {
            logger.LogWarning("SieveQ policy from {Source}: {Warning}", evaluation.Source, warning);
        }
        if (evaluation.Fingerprint == previous.Fingerprint)
        {
            // Back to the content already in force after a refused edit: nothing to swap, only the alarm to clear.
            if (hadAlarm)
            {
                logger.LogInformation("SieveQ policy from {Source} is valid again; generation {Generation} stays in force",
                    evaluation.Source, previous.Generation);
            }
            return;
        }
        var next = new AppliedPolicy(evaluation.Policy!, previous.Generation + 1, evaluation.Source, evaluation.Fingerprint, time.GetUtcNow());
        Volatile.Write(ref current, next);
        PolicyMetrics.Applied.Add(1, new KeyValuePair<string, object?>(PolicyMetrics.SourceTag, evaluation.Source));
        logger.LogInformation("SieveQ policy generation {Generation} from {Source} applied ({Fingerprint})",
            next.Generation, evaluation.Source, evaluation.Fingerprint);
        Notify(Applied, new PolicyAppliedEventArgs(next, previous, evaluation.Warnings));
    }

    private void Reject(PolicyEvaluation evaluation)
    {
        var inForce = Current;
        var args = new PolicyRejectedEventArgs(evaluation.Source, evaluation.Fingerprint, evaluation.Errors, inForce, time.GetUtcNow());
        Volatile.Write(ref alarm, args);
        PolicyMetrics.Rejected.Add(1, new KeyValuePair<string, object?>(PolicyMetrics.SourceTag, evaluation.Source));
        logger.LogError("SieveQ policy from {Source} rejected; generation {Generation} stays in force: {Errors}",
            evaluation.Source, inForce.Generation, string.Join("; ", evaluation.Errors));
        Notify(Rejected, args);
    }

    private void Notify<T>(EventHandler<T>? handler, T args)
    {
        try
        {
            handler?.Invoke(this, args);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // The policy is already in force (or already refused); a failing subscriber must not undo that.
            logger.LogError(e, "A SieveQ policy event handler failed");
        }
    }

    private void OnSourceChanged(object? sender, EventArgs e)
    {
        if (!disposed)
        {
            // Each notice restarts the wait, so a burst of writes is read once, after the last of them.
            try
            {
                settleTimer.Change(settleDelay, Timeout.InfiniteTimeSpan);
            }
            catch (ObjectDisposedException)
            {
                // Disposed between the check and the call.
            }
        }
    }

    private void OnSettled()
    {
        if (disposed)
        {
            return;
        }
        try
        {
            Refresh();
        }
        catch (ObjectDisposedException)
        {
            // Disposed while the timer fired.
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            logger.LogError(e, "Refreshing the SieveQ policy failed; the policy in force stays");
        }
    }
}
