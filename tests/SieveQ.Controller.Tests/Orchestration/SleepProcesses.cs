using System.Diagnostics;
using SieveQ.Controller.Orchestration;
using SieveQ.Deployment;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary>
/// A real <see cref="LocalProcessOrchestrator"/> whose "pre-SQs" are `sleep` processes: the same process handling
/// (start, SIGTERM, kill, exit events) as `sieveq up`'s pre-SQs, without building a deployment.
/// </summary>
internal sealed class SleepProcesses : IAsyncDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-orchestrator-" + Guid.NewGuid().ToString("N"));

    public SleepProcesses(params int[] preSqs)
        : this(preSqs.ToDictionary(id => ComponentRef.PreSq(id), _ => (IReadOnlyList<string>)["sleep", "300"]))
    {
    }

    /// <param name="healthy">Whether a live process counts as healthy (default: yes, what a pre-SQ's Health probe says once it listens).</param>
    public SleepProcesses(IReadOnlyDictionary<ComponentRef, IReadOnlyList<string>> commandLines, bool healthy = true)
    {
        Processes = new ComponentProcesses(args => new ProcessStartInfo(args[0], args.Skip(1)), _dir);
        Orchestrator = new LocalProcessOrchestrator(Processes, commandLines,
            (c, _) => Task.FromResult(healthy && Processes.Get(c.ToString()) is { HasExited: false }), TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(5));
    }

    public ComponentProcesses Processes { get; }
    public LocalProcessOrchestrator Orchestrator { get; }

    public int? Pid(int preSq) => Processes.Get(ComponentRef.PreSq(preSq).ToString()) is { HasExited: false } p ? p.Id : null;

    public async ValueTask DisposeAsync()
    {
        await Orchestrator.DisposeAsync();
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }
}
