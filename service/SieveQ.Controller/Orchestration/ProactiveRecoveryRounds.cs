using System.Globalization;
using Microsoft.Extensions.Logging;

namespace SieveQ.Controller.Orchestration;

/// <summary>
/// Proactive recovery (the SieveQ paper's section 4.4.3): a recovery round every <c>recoveryRoundEveryMinutes</c> of
/// controller.json, whether anything is suspected or not, so that a replica compromised without a trace does not stay
/// so for longer than that. Each round is the administrator's round (<see cref="ReplicaRecovery.RecoverRoundAsync"/>:
/// one replica at a time, refused while another recovery runs, every step audited), with the controller as the actor.
/// A round that fails is recorded and the next one comes at its time: the alarm is the audit record and the
/// `sieveq.controller.recovery_rounds` counter, not a retry loop.
/// </summary>
public sealed class ProactiveRecoveryRounds : IAsyncDisposable
{
    /// <summary>The bounds on the interval: shorter would keep a replica restarting most of the time; longer is no rejuvenation.</summary>
    public static readonly TimeSpan MinInterval = TimeSpan.FromMinutes(10);
    public static readonly TimeSpan MaxInterval = TimeSpan.FromDays(30);

    private readonly ReplicaRecovery _recovery;
    private readonly TimeSpan _every;
    private readonly TimeProvider _time;
    private readonly ILogger _log;
    private readonly CancellationTokenSource _stop = new();
    private Task _loop = Task.CompletedTask;

    public ProactiveRecoveryRounds(ReplicaRecovery recovery, TimeSpan every, TimeProvider time, ILogger log)
    {
        if (every < MinInterval || every > MaxInterval)
        {
            throw new ArgumentOutOfRangeException(nameof(every), every, $"a recovery round interval is {MinInterval.TotalMinutes:0} minutes to {MaxInterval.TotalDays:0} days");
        }
        _recovery = recovery;
        _every = every;
        _time = time;
        _log = log;
    }

    /// <summary>Rounds started so far (done or not).</summary>
    public int Started { get; private set; }

    public string Actor => $"controller (proactive recovery round every {_every.TotalMinutes.ToString("0", CultureInfo.InvariantCulture)} min)";

    public void Start() => _loop = Task.Run(() => RunAsync(_stop.Token));

    private async Task RunAsync(CancellationToken ct)
    {
        while (true)
        {
            try
            {
                await Task.Delay(_every, _time, ct).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
            Started++;
            // Not cancelled by the stop: a round under way runs to its end (each step is bounded) and is recorded.
            var outcome = await _recovery.RecoverRoundAsync(Actor, "every replica-SQ (proactive round)", id => $"replica-SQ {id} (proactive round)").ConfigureAwait(false);
            if (outcome.Done)
            {
                _log.LogInformation("proactive recovery round {Round}: {Status}", Started, outcome.Status);
            }
            else
            {
                _log.LogWarning("proactive recovery round {Round} not done (audit record {Record}): {Status}", Started, outcome.AuditSequence, outcome.Status);
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _loop.ConfigureAwait(false);
        _stop.Dispose();
    }
}
