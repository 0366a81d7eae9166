using SieveQ.Controller.Audit;

namespace SieveQ.Controller.Orchestration;

/// <summary>What came of an orchestration: done or not, in words, and the sequence of its last audit record.</summary>
public readonly record struct OrchestrationOutcome(bool Done, string Status, long AuditSequence);

/// <summary>
/// Carries out start, stop and replace on the <see cref="IComponentOrchestrator"/>, one operation at a time per
/// component, and writes each step to the audit log with who asked: a record before the step and one with its outcome,
/// so a controller that dies half way (a pre-SQ stopped, its replacement not yet started) leaves that in the log. One
/// at a time per component because two operations on the same pre-SQ would race (a stop of the fresh process);
/// different components do not share anything, so `sieveq up` starts its pre-SQs side by side (each operation is
/// bounded by the orchestrator's own timeouts). The outcome is recorded even when the caller hung up.
/// </summary>
public sealed class AuditedOrchestration
{
    /// <summary>Said, and recorded, when the controller runs without an orchestrator.</summary>
    public const string NoOrchestrator =
        "not carried out: this controller runs no orchestrator (`sieveq up` gives it one; docs/orchestration.md)";

    private readonly IComponentOrchestrator? _orchestrator;
    private readonly AuditLog _audit;
    private readonly Lock _gatesLock = new();
    /// <summary>One gate per component with an operation running or waiting: removed when its last user leaves, so at most one per component.</summary>
    private readonly Dictionary<ComponentRef, Gate> _gates = [];

    public AuditedOrchestration(IComponentOrchestrator? orchestrator, AuditLog audit)
    {
        _orchestrator = orchestrator;
        _audit = audit;
    }

    public IComponentOrchestrator? Orchestrator => _orchestrator;

    public static string ActionName(string verb, ComponentRef component) => component.Kind switch
    {
        ComponentKind.PreSq => verb + "-pre-sq",
        ComponentKind.Replica => verb + "-replica",
        _ => verb + "-" + component.Kind.ToString().ToLowerInvariant(),
    };

    public Task<OrchestrationOutcome> StartAsync(string actor, ComponentRef component, string target) =>
        RunAsync(actor, component, ActionName("start", component), target, async (o, record) =>
        {
            await record($"starting through {o.Name}").ConfigureAwait(false);
            return "started: " + await o.StartAsync(component, CancellationToken.None).ConfigureAwait(false);
        });

    public Task<OrchestrationOutcome> StopAsync(string actor, ComponentRef component, string target) =>
        RunAsync(actor, component, ActionName("stop", component), target, async (o, record) =>
        {
            await record($"stopping through {o.Name}").ConfigureAwait(false);
            return "stopped: " + await o.StopAsync(component, CancellationToken.None).ConfigureAwait(false);
        });

    /// <summary>
    /// Stop, then start a fresh process of the same component. The pre-SQ keeps its data folder (its durable
    /// ordering-sequence reservation): a pre-SQ started with an empty one would number its ordering requests from 1
    /// again and the replicas, which execute each number once, would never answer it (OrderingSequenceReservation);
    /// learning the numbers from the replicas at start is not built. Everything else a pre-SQ holds is in memory.
    /// </summary>
    public Task<OrchestrationOutcome> ReplaceAsync(string actor, ComponentRef component, string target) =>
        RunAsync(actor, component, ActionName("replace", component), target, async (o, record) =>
        {
            await record($"stopping through {o.Name}").ConfigureAwait(false);
            var stopped = await o.StopAsync(component, CancellationToken.None).ConfigureAwait(false);
            await record($"stopped ({stopped}); starting a fresh process").ConfigureAwait(false);
            return "replaced: " + await o.StartAsync(component, CancellationToken.None).ConfigureAwait(false);
        });

    /// <summary>
    /// A recovery: stop, start a fresh process on the component's kept state, then <paramref name="afterStart"/> (a
    /// replica's wait until it has caught up, which throws <see cref="OrchestratorException"/> when it does not), each
    /// step recorded, the component's gate held throughout so nothing else starts or stops it half way.
    /// </summary>
    public Task<OrchestrationOutcome> RecoverAsync(string actor, ComponentRef component, string target, Func<Func<string, Task>, Task<string>> afterStart) =>
        RunAsync(actor, component, ActionName("recover", component), target, async (o, record) =>
        {
            await record($"stopping through {o.Name}").ConfigureAwait(false);
            var stopped = await o.StopAsync(component, CancellationToken.None).ConfigureAwait(false);
            await record($"stopped ({stopped}); starting a fresh process").ConfigureAwait(false);
            var started = await o.StartAsync(component, CancellationToken.None).ConfigureAwait(false);
            await record($"started ({started}); waiting until it has caught up").ConfigureAwait(false);
            return $"recovered: {started}; " + await afterStart(record).ConfigureAwait(false);
        });

    /// <summary>A record of a decision not to act (a bound reached), in the same action's words.</summary>
    public Task<AuditRecord> RecordAsync(string actor, string action, string target, string outcome) =>
        _audit.AppendAsync(actor, action, target, Truncate(outcome, 1000), CancellationToken.None);

    private async Task<OrchestrationOutcome> RunAsync(string actor, ComponentRef component, string action, string target,
        Func<IComponentOrchestrator, Func<string, Task>, Task<string>> steps)
    {
        if (_orchestrator is null)
        {
            var none = await _audit.AppendAsync(actor, action, target, NoOrchestrator, CancellationToken.None).ConfigureAwait(false);
            return new OrchestrationOutcome(false, NoOrchestrator, none.Sequence);
        }
        var gate = Enter(component);
        await gate.One.WaitAsync().ConfigureAwait(false);
        try
        {
            string status;
            var done = false;
            try
            {
                status = await steps(_orchestrator, outcome => _audit.AppendAsync(actor, action, target, outcome, CancellationToken.None)).ConfigureAwait(false);
                done = true;
            }
            catch (OrchestratorException e)
            {
                status = "failed: " + e.Message;
            }
            var record = await _audit.AppendAsync(actor, action, target, Truncate(status, 1000), CancellationToken.None).ConfigureAwait(false);
            return new OrchestrationOutcome(done, status, record.Sequence);
        }
        finally
        {
            Leave(component, gate);
        }
    }

    private Gate Enter(ComponentRef component)
    {
        lock (_gatesLock)
        {
            if (!_gates.TryGetValue(component, out var gate))
            {
                gate = new Gate();
                _gates.Add(component, gate);
            }
            gate.Users++;
            return gate;
        }
    }

    private void Leave(ComponentRef component, Gate gate)
    {
        gate.One.Release();
        lock (_gatesLock)
        {
            if (--gate.Users == 0)
            {
                _gates.Remove(component);
            }
        }
    }

    /// <summary>Serializes one component's operations; <see cref="Users"/> (under the gates' lock) counts those holding or waiting for it.</summary>
    private sealed class Gate
    {
        public SemaphoreSlim One { get; } = new(1, 1);
        public int Users { get; set; }
    }

    private static string Truncate(string s, int max) => s.Length <= max ? s : s[..max];
}
