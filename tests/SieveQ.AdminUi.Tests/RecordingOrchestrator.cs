using SieveQ.Controller.Orchestration;

namespace SieveQ.AdminUi.Tests;

/// <summary>Starts and stops nothing: says what a real orchestrator would have done, with a fresh pid for each start.</summary>
internal sealed class RecordingOrchestrator : IComponentOrchestrator
{
    private readonly Lock _lock = new();
    private readonly List<string> _calls = [];
    private int _pid = 1000;

    public string Name => "recorded processes";

    public IReadOnlyList<string> Calls
    {
        get
        {
            lock (_lock)
            {
                return [.. _calls];
            }
        }
    }

    public Task<string> StartAsync(ComponentRef component, CancellationToken ct)
    {
        lock (_lock)
        {
            _calls.Add($"start {component}");
            return Task.FromResult($"started pid {++_pid}, healthy");
        }
    }

    public Task<string> StopAsync(ComponentRef component, CancellationToken ct)
    {
        lock (_lock)
        {
            _calls.Add($"stop {component}");
            return Task.FromResult($"stopped {component}");
        }
    }
}
