using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Globalization;
using Microsoft.Extensions.Logging;

namespace SieveQ.Controller.Orchestration;

/// <summary>
/// Recovers replica-SQs (the SieveQ paper's section 4.4.3) without the ordering ever stopping: a replica is recovered
/// only while at least 2f+1 of the others are healthy, so a quorum orders on while it restarts; its process is stopped
/// and a fresh one started on its kept state (its write-ahead log: a replica that forgot what it voted could vote
/// otherwise in the same regency, docs/orchestration.md); the recovery ends once it has decided as far as the others
/// had when it was stopped, the part it missed fetched from them by state transfer, and every healthy replica links to
/// it again. A round recovers every replica this way, one at a time, each time the current leader first (a stopping
/// leader steps down, so each step costs one quick regency change), and stops at the first that fails.
/// One recovery or round at a time: two replicas restarting together could leave fewer than 2f+1 running.
/// </summary>
public sealed class ReplicaRecovery
{
    /// <summary>Said, and recorded, when the controller cannot read the replicas' progress.</summary>
    public const string NoProgressSource = "not carried out: this controller reads no replica's progress (it runs without a deployment)";

    private static readonly Meter Meter = new("SieveQ.Controller.Orchestration");
    private static readonly Counter<long> Recoveries = Meter.CreateCounter<long>("sieveq.controller.replica_recoveries",
        description: "Replica recoveries, by outcome (recovered, failed, refused)");
    private static readonly Counter<long> Rounds = Meter.CreateCounter<long>("sieveq.controller.recovery_rounds",
        description: "Recovery rounds, by outcome (done, stopped, refused)");

    private readonly AuditedOrchestration _orchestration;
    private readonly IReplicaProgressSource? _progress;
    private readonly ReplicaRecoveryOptions _options;
    private readonly ILogger _log;
    private readonly SemaphoreSlim _one = new(1, 1);

    public ReplicaRecovery(AuditedOrchestration orchestration, IReplicaProgressSource? progress, ReplicaRecoveryOptions? options, ILogger log)
    {
        _orchestration = orchestration;
        _progress = progress;
        _options = options ?? new ReplicaRecoveryOptions();
        _log = log;
    }

    /// <summary>The replica ids this controller can recover (none without a progress source).</summary>
    public IReadOnlyList<int> Replicas => _progress?.Replicas ?? [];

    /// <summary>Recovers one replica, or records why not (fewer than 2f+1 others healthy, a recovery under way).</summary>
    public async Task<OrchestrationOutcome> RecoverAsync(string actor, int replica, string target)
    {
        if (await RefusalAsync(actor, "recover-replica", target).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        try
        {
            return await RecoverOneAsync(actor, replica, target, TimeSpan.Zero).ConfigureAwait(false);
        }
        finally
        {
            _one.Release();
        }
    }

    /// <summary>A round: every replica recovered in turn, each time the current leader first; the outcome names each in order. <paramref name="targetOf"/> names a replica in its own recovery's records.</summary>
    public async Task<OrchestrationOutcome> RecoverRoundAsync(string actor, string target, Func<int, string> targetOf)
    {
        if (await RefusalAsync(actor, "recovery-round", target).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        try
        {
            var clock = Stopwatch.StartNew();
            await _orchestration.RecordAsync(actor, "recovery-round", target,
                $"started: {_progress!.Replicas.Count.ToString(CultureInfo.InvariantCulture)} replica-SQs, each time the current leader first (it hands the regency over as it stops)").ConfigureAwait(false);
            var recovered = new List<int>();
            while (recovered.Count < _progress.Replicas.Count)
            {
                var replica = await NextInRoundAsync(recovered).ConfigureAwait(false);
                var one = await RecoverOneAsync(actor, replica, targetOf(replica), _options.QuorumWait).ConfigureAwait(false);
                if (!one.Done)
                {
                    Rounds.Add(1, new KeyValuePair<string, object?>("outcome", "stopped"));
                    var stopped = $"stopped at {ComponentRef.Replica(replica)} after {Recovered(recovered)}: {one.Status}";
                    var failed = await _orchestration.RecordAsync(actor, "recovery-round", target, stopped).ConfigureAwait(false);
                    return new OrchestrationOutcome(false, stopped, failed.Sequence);
                }
                recovered.Add(replica);
                _log.LogInformation("recovery round: {Replica} recovered ({Done} of {Count})", ComponentRef.Replica(replica), recovered.Count, _progress.Replicas.Count);
            }
            Rounds.Add(1, new KeyValuePair<string, object?>("outcome", "done"));
            var status = $"done: recovered {Recovered(recovered)} in {clock.Elapsed.TotalSeconds.ToString("0.0", CultureInfo.InvariantCulture)} s";
            var record = await _orchestration.RecordAsync(actor, "recovery-round", target, status).ConfigureAwait(false);
            return new OrchestrationOutcome(true, status, record.Sequence);
        }
        finally
        {
            _one.Release();
        }
    }

    private static string Recovered(List<int> replicas) =>
        replicas.Count == 0 ? "none recovered" : string.Join(", ", replicas.Select(r => ComponentRef.Replica(r).ToString()));

    /// <summary>Null with the recovery gate taken; otherwise the recorded reason nothing is done.</summary>
    private async Task<OrchestrationOutcome?> RefusalAsync(string actor, string action, string target)
    {
        string? why = _progress is null ? NoProgressSource
            : _orchestration.Orchestrator is null ? AuditedOrchestration.NoOrchestrator
            : !_one.Wait(0) ? "refused: a replica recovery or round is under way; one at a time keeps 2f+1 replicas running"
            : null;
        if (why is null)
        {
            return null;
        }
        (action == "recovery-round" ? Rounds : Recoveries).Add(1, new KeyValuePair<string, object?>("outcome", "refused"));
        var record = await _orchestration.RecordAsync(actor, action, target, why).ConfigureAwait(false);
        return new OrchestrationOutcome(false, why, record.Sequence);
    }

    private async Task<OrchestrationOutcome> RecoverOneAsync(string actor, int replica, string target, TimeSpan quorumWait)
    {
        var component = ComponentRef.Replica(replica);
        var (others, enough) = await OthersAsync(replica, quorumWait).ConfigureAwait(false);
        var healthy = others.Where(o => o.Healthy).ToList();
        if (!enough)
        {
            Recoveries.Add(1, new KeyValuePair<string, object?>("outcome", "refused"));
            var refused = $"refused: {healthy.Count} of the {others.Count} other replica-SQs are healthy, {Quorum} needed to order on while {component} restarts ("
                + string.Join("; ", others.Where(o => !o.Healthy)) + ")";
            var record = await _orchestration.RecordAsync(actor, "recover-replica", target, refused).ConfigureAwait(false);
            return new OrchestrationOutcome(false, refused, record.Sequence);
        }
        // How far the quorum had decided before the stop: the recovered replica has caught up once it is there too.
        var mark = healthy.Max(o => o.LastDecided);
        var outcome = await _orchestration.RecoverAsync(actor, component, target, _ => CatchUpAsync(replica, mark)).ConfigureAwait(false);
        Recoveries.Add(1, new KeyValuePair<string, object?>("outcome", outcome.Done ? "recovered" : "failed"));
        return outcome;
    }

    private int Quorum => 2 * _progress!.F + 1;

    /// <summary>The other replicas' progress, read until 2f+1 of them are healthy or <paramref name="wait"/> passes (at least one reading).</summary>
    private async Task<(IReadOnlyList<ReplicaProgress> Others, bool Enough)> OthersAsync(int replica, TimeSpan wait)
    {
        var deadline = DateTime.UtcNow + wait;
        while (true)
        {
            var others = (await ReadAllAsync().ConfigureAwait(false)).Where(p => p.Replica != replica).ToList();
            var enough = others.Count(o => o.Healthy) >= Quorum;
            if (enough || DateTime.UtcNow >= deadline)
            {
                return (others, enough);
            }
            await Task.Delay(_options.PollInterval).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Until the replica is healthy, has decided at least up to <paramref name="mark"/>, and every healthy replica has
    /// its links to the other healthy ones up again: a peer that has not redialled the fresh process yet does not send
    /// it proposals, and stopping the next replica before then would leave a quorum that cannot decide.
    /// </summary>
    private async Task<string> CatchUpAsync(int replica, long mark)
    {
        var clock = Stopwatch.StartNew();
        ReplicaProgress last;
        var unlinked = new List<ReplicaProgress>();
        do
        {
            var all = await ReadAllAsync().ConfigureAwait(false);
            last = all.First(p => p.Replica == replica);
            var healthy = all.Where(p => p.Healthy).ToList();
            unlinked = [.. healthy.Where(p => p.ConnectedReplicas < healthy.Count - 1)];
            if (last.Healthy && last.LastDecided >= mark && unlinked.Count == 0)
            {
                return $"caught up: decided up to {last.LastDecided.ToString(CultureInfo.InvariantCulture)} (the others were at {mark.ToString(CultureInfo.InvariantCulture)}), "
                    + $"{healthy.Count.ToString(CultureInfo.InvariantCulture)} healthy replicas all linked, "
                    + $"{clock.Elapsed.TotalSeconds.ToString("0.0", CultureInfo.InvariantCulture)} s after its start";
            }
            await Task.Delay(_options.PollInterval).ConfigureAwait(false);
        }
        while (clock.Elapsed < _options.CatchUpTimeout);
        var links = unlinked.Count == 0 ? ""
            : "; links not all up: " + string.Join(", ", unlinked.Select(p => $"{ComponentRef.Replica(p.Replica)} has {p.ConnectedReplicas.ToString(CultureInfo.InvariantCulture)}"));
        throw new OrchestratorException($"not caught up within {_options.CatchUpTimeout.TotalSeconds.ToString("0", CultureInfo.InvariantCulture)} s: "
            + $"{last} (the others were at {mark.ToString(CultureInfo.InvariantCulture)}){links}");
    }

    /// <summary>
    /// The current leader (regency mod n, as the ordering picks it, from the highest regency a healthy replica reports)
    /// if it is not recovered yet, else the lowest id not recovered yet. The leader first: it steps down as it stops,
    /// so every step is one quick regency change, and each recovered replica (which may not WRITE in the regency it
    /// restarted into, docs/bft-protocol.md F4) is past that regency before the next replica goes.
    /// </summary>
    private async Task<int> NextInRoundAsync(List<int> recovered)
    {
        var all = await ReadAllAsync().ConfigureAwait(false);
        var regency = all.Where(p => p.Healthy).Select(p => p.Regency).DefaultIfEmpty(0).Max();
        var leader = (int)(regency % _progress!.Replicas.Count);
        return recovered.Contains(leader) ? _progress.Replicas.Where(r => !recovered.Contains(r)).Min() : leader;
    }

    /// <summary>Every replica's progress, read side by side.</summary>
    private Task<ReplicaProgress[]> ReadAllAsync() => Task.WhenAll(_progress!.Replicas.Select(r => _progress.ReadAsync(r, CancellationToken.None)));
}
