using System.Globalization;
using SieveQ.Deployment;

namespace SieveQ.Controller.Orchestration;

/// <summary>
/// Components as child processes of the controller (development, tests, `sieveq up`): the controller owns the
/// pre-SQ processes, so the process that decides to replace one is the process that can (no second actor, no
/// channel to authenticate). A component is started with the command line of its <see cref="LocalLaunchPlan"/>
/// entry, the one `sieveq up` would use, through <see cref="ComponentProcesses"/> (output in its log, SIGTERM then
/// SIGKILL after the grace). Start returns once the component answers its health probe.
/// </summary>
public sealed class LocalProcessOrchestrator : IComponentOrchestrator, IAsyncDisposable
{
    private readonly ComponentProcesses _processes;
    private readonly IReadOnlyDictionary<ComponentRef, IReadOnlyList<string>> _commandLines;
    private readonly Func<ComponentRef, CancellationToken, Task<bool>> _healthy;
    private readonly TimeSpan _startTimeout;
    private readonly TimeSpan _stopGrace;

    /// <param name="processes">Owned: disposing the orchestrator stops every component it started.</param>
    /// <param name="commandLines">The arguments each component is started with; a component not listed cannot be started.</param>
    /// <param name="healthy">One health probe of the component (for a pre-SQ, its Health call).</param>
    public LocalProcessOrchestrator(ComponentProcesses processes, IReadOnlyDictionary<ComponentRef, IReadOnlyList<string>> commandLines,
        Func<ComponentRef, CancellationToken, Task<bool>> healthy, TimeSpan? startTimeout = null, TimeSpan? stopGrace = null)
    {
        _processes = processes;
        _commandLines = commandLines;
        _healthy = healthy;
        _startTimeout = startTimeout ?? TimeSpan.FromSeconds(60);
        _stopGrace = stopGrace ?? TimeSpan.FromSeconds(10);
    }

    public string Name => "local processes";

    public async Task<string> StartAsync(ComponentRef component, CancellationToken ct)
    {
        if (!_commandLines.TryGetValue(component, out var args))
        {
            throw new OrchestratorException($"no {component} in this controller's launch plan");
        }
        var name = component.ToString();
        if (_processes.Get(name) is { } previous)
        {
            if (!previous.HasExited)
            {
                return $"already running (pid {previous.Id.ToString(CultureInfo.InvariantCulture)})";
            }
            // It ended by itself: forget it, so that the start below is the only process under the name.
            await _processes.StopAsync(name, TimeSpan.Zero).ConfigureAwait(false);
        }
        var process = _processes.Start(name, args);
        var pid = process.Id;
        var deadline = DateTime.UtcNow + _startTimeout;
        while (DateTime.UtcNow < deadline)
        {
            if (process.HasExited)
            {
                var code = process.ExitCode;
                await _processes.StopAsync(name, TimeSpan.Zero).ConfigureAwait(false);
                throw new OrchestratorException($"{name} (pid {pid.ToString(CultureInfo.InvariantCulture)}) exited with code {code.ToString(CultureInfo.InvariantCulture)} while starting; see {_processes.LogPath(name)}");
            }
            if (await _healthy(component, ct).ConfigureAwait(false))
            {
                return $"started pid {pid.ToString(CultureInfo.InvariantCulture)}, healthy";
            }
            await Task.Delay(200, ct).ConfigureAwait(false);
        }
        // A component that never became healthy is stopped again: a half-started one would hold its port and its state.
        await _processes.StopAsync(name, _stopGrace).ConfigureAwait(false);
        throw new OrchestratorException($"{name} (pid {pid.ToString(CultureInfo.InvariantCulture)}) was not healthy within {_startTimeout.TotalSeconds:0} s and was stopped again; see {_processes.LogPath(name)}");
    }

    public async Task<string> StopAsync(ComponentRef component, CancellationToken ct)
    {
        var name = component.ToString();
        if (_processes.Get(name) is not { } process)
        {
            return _commandLines.ContainsKey(component)
                ? "not running under this controller"
                : throw new OrchestratorException($"no {component} in this controller's launch plan");
        }
        var pid = process.HasExited ? "" : $" (pid {process.Id.ToString(CultureInfo.InvariantCulture)})";
        await _processes.StopAsync(name, _stopGrace).ConfigureAwait(false);
        return "stopped" + pid;
    }

    public ValueTask DisposeAsync() => _processes.DisposeAsync();
}
