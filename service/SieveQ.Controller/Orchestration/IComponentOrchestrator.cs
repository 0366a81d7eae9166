namespace SieveQ.Controller.Orchestration;

/// <summary>
/// The controller's only way to touch component processes: start and stop, by kind and id. It is small on
/// purpose (docs/orchestration.md): a replacement is a stop then a start, composed and audited step by step by
/// <see cref="AuditedOrchestration"/>, the same for every implementation. Nothing the sieve's safety rests on is in
/// here: a started pre-SQ is trusted for its enrolled key, not for having been started, so an orchestrator that
/// fails or lies can delay the healing but never make the sieve deliver a bad message or lose a good one.
/// Implementations: <see cref="LocalProcessOrchestrator"/> (`sieveq up`, tests) and <see cref="WindowsServiceOrchestrator"/>.
/// </summary>
public interface IComponentOrchestrator
{
    /// <summary>How the audit log names it: "local processes", "Windows services".</summary>
    string Name { get; }

    /// <summary>Starts the component and returns once it answers its health probe (or throws <see cref="OrchestratorException"/>); starting a running one changes nothing.</summary>
    /// <returns>What was done, for the audit log ("started pid 4121, healthy").</returns>
    Task<string> StartAsync(ComponentRef component, CancellationToken ct);

    /// <summary>Stops the component (a grace period, then a kill) and returns once it is gone; stopping a stopped one changes nothing.</summary>
    Task<string> StopAsync(ComponentRef component, CancellationToken ct);
}
