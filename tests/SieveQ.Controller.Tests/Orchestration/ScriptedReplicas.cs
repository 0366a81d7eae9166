using System.Collections.Concurrent;
using SieveQ.Controller.Orchestration;

namespace SieveQ.Controller.Tests.Orchestration;

/// <summary>
/// Four replica-SQs (f = 1) as `sleep` processes under a real <see cref="LocalProcessOrchestrator"/>, and what their
/// health calls would say: a replica whose process is gone is unreachable; a running one reports the cluster's
/// decided instance, or, once restarted, what <see cref="AfterRestart"/> says (catching up, or stuck).
/// </summary>
internal sealed class ScriptedReplicas : IReplicaProgressSource, IAsyncDisposable
{
    private readonly ConcurrentDictionary<int, int> _firstPid = new();

    public ScriptedReplicas()
    {
        Sleeps = new SleepProcesses(Replicas.ToDictionary(id => ComponentRef.Replica(id), _ => (IReadOnlyList<string>)["sleep", "300"]));
    }

    public SleepProcesses Sleeps { get; }

    public IReadOnlyList<int> Replicas { get; } = [0, 1, 2, 3];

    public int F => 1;

    /// <summary>How far the cluster has decided (what every first process reports).</summary>
    public long Decided { get; set; } = 1000;

    /// <summary>The regency; it moves on by one, as a step-down does, whenever its leader's process is replaced.</summary>
    public long Regency
    {
        get
        {
            lock (_regencyLock)
            {
                var leader = (int)(_regency % Replicas.Count);
                if (_leaderPid is { } pid && Pid(leader) != pid)
                {
                    _regency++;
                    _leaderPid = Pid((int)(_regency % Replicas.Count));
                }
                return _regency;
            }
        }
        set
        {
            lock (_regencyLock)
            {
                _regency = value;
                _leaderPid = Pid((int)(value % Replicas.Count));
            }
        }
    }

    private readonly Lock _regencyLock = new();
    private long _regency;
    private int? _leaderPid;

    /// <summary>Replicas that answer unhealthy although running (links down, stalled).</summary>
    public ConcurrentDictionary<int, string> Unhealthy { get; } = new();

    /// <summary>What a restarted replica reports, by id: by default the cluster's figure (caught up at once).</summary>
    public Func<int, long>? AfterRestart { get; set; }

    public async Task StartAllAsync()
    {
        foreach (var id in Replicas)
        {
            await Sleeps.Orchestrator.StartAsync(ComponentRef.Replica(id), CancellationToken.None);
            _firstPid[id] = Pid(id)!.Value;
        }
        Regency = _regency;
    }

    public int? Pid(int replica) => Sleeps.Processes.Get(ComponentRef.Replica(replica).ToString()) is { HasExited: false } p ? p.Id : null;

    public bool Restarted(int replica) => Pid(replica) is { } pid && pid != _firstPid[replica];

    public Task<ReplicaProgress> ReadAsync(int replica, CancellationToken ct)
    {
        if (Pid(replica) is null)
        {
            return Task.FromResult(new ReplicaProgress(replica, false, -1, -1, "connection refused"));
        }
        if (Unhealthy.TryGetValue(replica, out var why))
        {
            return Task.FromResult(new ReplicaProgress(replica, false, Decided, Regency, why, Links(replica)));
        }
        var decided = Restarted(replica) ? AfterRestart?.Invoke(replica) ?? Decided : Decided;
        return Task.FromResult(new ReplicaProgress(replica, true, decided, Regency, "ok", Links(replica)));
    }

    /// <summary>Links a replica reports beyond those to running peers: negative for peers that have not redialled yet.</summary>
    public ConcurrentDictionary<int, int> LinksMissing { get; } = new();

    /// <summary>A running replica links to every other running one, less what <see cref="LinksMissing"/> says.</summary>
    private int Links(int replica) => Replicas.Count(r => r != replica && Pid(r) is not null) - LinksMissing.GetValueOrDefault(replica);

    public ValueTask DisposeAsync() => Sleeps.DisposeAsync();
}
