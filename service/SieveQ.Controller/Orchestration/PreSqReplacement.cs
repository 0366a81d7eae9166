using System.Diagnostics.Metrics;
using Microsoft.Extensions.Logging;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Replicas;

namespace SieveQ.Controller.Orchestration;

/// <summary>
/// The first self-healing action (SieveQ paper 4.4.2): when f+1 distinct replica-SQs report that they quarantined a
/// pre-SQ for its suspicion (<see cref="ReplicaNoticeActions.RemovePreSq"/>), the controller replaces that pre-SQ's
/// process. The replicas have already stopped taking what it forwards and move its senders at their next ACKREQ; the
/// replacement gives the id a fresh process (in-memory state an attacker may have tampered with is gone) that serves
/// again once the replicas' suspicion of it decays. Rules: never on fewer than f+1 distinct replicas, once per notice
/// (both <see cref="ReplicaNoticeTally"/>'s: <see cref="ReplicaNoticeEndpoint"/> begins a replacement only for a notice
/// the tally says just <see cref="ReplicaNoticeStanding.Reached"/> f+1), at most <see cref="ReplacementBudget.Max"/> per
/// pre-SQ per window (beyond: an alarm, and nothing done), every step in the audit log with the replicas that asked.
/// The work runs after the replica's report is answered: a report must not wait for a process to start.
/// </summary>
public sealed class PreSqReplacement : IAsyncDisposable
{
    private static readonly Meter Meter = new("SieveQ.Controller.Orchestration");
    private static readonly Counter<long> Replacements = Meter.CreateCounter<long>("sieveq.controller.pre_sq_replacements",
        description: "Replacements of a pre-SQ asked for by f+1 replicas, by outcome (replaced, failed, refused_bound, no_orchestrator)");
    private static readonly Counter<long> Alarms = Meter.CreateCounter<long>("sieveq.controller.orchestration_alarms",
        description: "Times the controller stopped acting on a component because it hit the replacement bound: a person must look");

    private readonly AuditedOrchestration _orchestration;
    private readonly ReplacementBudget _budget;
    private readonly ILogger _log;
    private readonly Lock _lock = new();
    private readonly List<Task> _running = [];

    public PreSqReplacement(AuditedOrchestration orchestration, ReplacementBudget budget, ILogger log)
    {
        _orchestration = orchestration;
        _budget = budget;
        _log = log;
    }

    /// <summary>The audit record of the notice says this: what follows it.</summary>
    public string Intent(ComponentRef component) => _orchestration.Orchestrator is { } o
        ? $"recorded; replacing {component} through {o.Name} (the replace-pre-sq records follow)"
        : "recorded, not carried out: the replicas quarantined the pre-SQ and move its senders; " + AuditedOrchestration.NoOrchestrator;

    /// <summary>
    /// Starts the replacement of <paramref name="component"/> and returns without waiting for it (<see cref="WhenIdleAsync"/> does).
    /// <paramref name="actor"/> (the f+1 replicas) and <paramref name="target"/> (the notice) are the words of the
    /// replica-notice record it follows, so one search finds both.
    /// </summary>
    public void Begin(ComponentRef component, string actor, string target)
    {
        var work = ReplaceAsync(component, actor, target);
        lock (_lock)
        {
            _running.RemoveAll(t => t.IsCompleted);
            _running.Add(work);
        }
    }

    /// <summary>Acts on one notice that f+1 replicas reported, once (the caller's, the tally's, guarantee), within the bound.</summary>
    public async Task<OrchestrationOutcome> ReplaceAsync(ComponentRef component, string actor, string target)
    {
        if (_orchestration.Orchestrator is null)
        {
            Replacements.Add(1, new KeyValuePair<string, object?>("outcome", "no_orchestrator"));
            return await _orchestration.ReplaceAsync(actor, component, target).ConfigureAwait(false);
        }
        if (!_budget.TryTake(component))
        {
            Replacements.Add(1, new KeyValuePair<string, object?>("outcome", "refused_bound"));
            Alarms.Add(1, new KeyValuePair<string, object?>("component", component.ToString()));
            var why = $"refused: {component} was replaced {_budget.Max} times within {_budget.Window.TotalMinutes:0} min; the controller stops replacing it "
                + "(alarm: an operator must find why it keeps being suspected)";
            _log.LogCritical("ALARM {Component}: {Why}", component, why);
            var record = await _orchestration.RecordAsync(actor, AuditedOrchestration.ActionName("replace", component), target, why).ConfigureAwait(false);
            return new OrchestrationOutcome(false, why, record.Sequence);
        }
        var outcome = await _orchestration.ReplaceAsync(actor, component, target).ConfigureAwait(false);
        Replacements.Add(1, new KeyValuePair<string, object?>("outcome", outcome.Done ? "replaced" : "failed"));
        if (!outcome.Done)
        {
            _log.LogError("replacing {Component} failed: {Status}", component, outcome.Status);
        }
        return outcome;
    }

    /// <summary>Waits for the replacements begun so far (tests; the controller's stop).</summary>
    public Task WhenIdleAsync()
    {
        lock (_lock)
        {
            return Task.WhenAll(_running.ToList());
        }
    }

    public async ValueTask DisposeAsync() => await WhenIdleAsync().ConfigureAwait(false);
}
