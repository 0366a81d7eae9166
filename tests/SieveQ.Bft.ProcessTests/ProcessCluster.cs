using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Client;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Replica;

namespace SieveQ.Bft.ProcessTests;

/// <summary>
/// A cluster of `sieveq replica` processes in a temporary directory. Every wait is bounded; disposing
/// kills every process this fixture started (by its own handle, never by name) and removes the directory.
/// </summary>
internal sealed class ProcessCluster : IAsyncDisposable
{
    /// <summary>Short time-outs so faults are noticed within seconds.</summary>
    public static ReplicaConfig FastProtocol => new()
    {
        RequestTimeoutMs = 800,
        HeartbeatIntervalMs = 100,
        LeaderSilenceTimeoutMs = 600,
        SyncTimeoutMs = 1_000,
        MaxDecisionIntervalMs = 1_000,
        CheckpointInterval = 32,
        StateServeIntervalMs = 200,
        StateTransferTimeoutMs = 1_000,
    };

    private readonly Process?[] _processes;
    private readonly List<Process> _all = [];
    private readonly List<BftClient> _clients = [];

    public ProcessCluster(bool durability, int replicas = 4, int clients = 2)
    {
        Directory = System.IO.Directory.CreateTempSubdirectory("sieveq-proc-").FullName;
        Config = ClusterBootstrap.Create(Directory, replicas, clients, FreePorts.Block(replicas), FastProtocol with { N = replicas }, durability);
        ConfigPath = Path.Combine(Directory, ClusterBootstrap.ConfigFileName);
        _processes = new Process?[replicas];
    }

    public string Directory { get; }
    public ClusterConfig Config { get; }
    public string ConfigPath { get; }
    public int N => Config.N;

    public static string SieveqDll =>
        typeof(ProcessCluster).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "SieveqDll").Value!;

    public void Start(int id)
    {
        if (_processes[id] is { HasExited: false })
        {
            throw new InvalidOperationException($"replica {id} is already running");
        }
        if (File.Exists(StatusPath(id)))
        {
            File.Delete(StatusPath(id));  // never mistake a dead process's last words for the new one's
        }
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var a in new[] { SieveqDll, "replica", "--config", ConfigPath, "--id", id.ToString(CultureInfo.InvariantCulture) })
        {
            psi.ArgumentList.Add(a);
        }
        var log = new StreamWriter(Path.Combine(Directory, $"replica-{id}.log"), append: true) { AutoFlush = true };
        var p = new Process { StartInfo = psi };
        p.OutputDataReceived += (_, e) => Append(log, e.Data);
        p.ErrorDataReceived += (_, e) => Append(log, e.Data);
        p.Start();
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        _processes[id] = p;
        _all.Add(p);
    }

    private static void Append(StreamWriter log, string? line)
    {
        if (line is not null)
        {
            lock (log)
            {
                log.WriteLine(line);
            }
        }
    }

    public void StartAll()
    {
        for (var i = 0; i < N; i++)
        {
            Start(i);
        }
    }

    public bool IsRunning(int id) => _processes[id] is { HasExited: false };

    /// <summary>kill -9: no chance to flush or say goodbye.</summary>
    public void Kill(int id)
    {
        var p = _processes[id] ?? throw new InvalidOperationException($"replica {id} not started");
        p.Kill();
        if (!p.WaitForExit(10_000))
        {
            throw new TimeoutException($"replica {id} did not die");
        }
    }

    public Task PauseAsync(int id) => SignalAsync(id, "STOP");

    public Task ResumeAsync(int id) => SignalAsync(id, "CONT");

    private async Task SignalAsync(int id, string signal)
    {
        var p = _processes[id] ?? throw new InvalidOperationException($"replica {id} not started");
        using var kill = Process.Start(new ProcessStartInfo("kill", [$"-{signal}", p.Id.ToString(CultureInfo.InvariantCulture)]) { UseShellExecute = false })!;
        await kill.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(0, kill.ExitCode);
    }

    /// <summary>Resident memory of a running replica in MB, from /proc.</summary>
    public long ResidentMegabytes(int id)
    {
        var p = _processes[id] ?? throw new InvalidOperationException($"replica {id} not started");
        foreach (var line in File.ReadLines($"/proc/{p.Id}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                return long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], CultureInfo.InvariantCulture) / 1024;
            }
        }
        return 0;
    }

    public string StatusPath(int id) => Path.Combine(Config.ReplicaDataDir(id), "status.json");

    /// <summary>The running replica's latest status, or null if it is down or has not reported yet.</summary>
    public ReplicaStatus? Status(int id)
    {
        var s = ReplicaStatus.TryRead(StatusPath(id));
        return s is not null && _processes[id] is { HasExited: false } p && s.Pid == p.Id ? s : null;
    }

    public IReadOnlyList<ReplicaStatus> LiveStatuses() =>
        Enumerable.Range(0, N).Where(IsRunning).Select(Status).Where(s => s is not null).Select(s => s!).ToList();

    public async Task<T> WaitForAsync<T>(Func<T?> probe, TimeSpan timeout, string what) where T : class
    {
        var sw = Stopwatch.StartNew();
        while (sw.Elapsed < timeout)
        {
            if (probe() is { } v)
            {
                return v;
            }
            await Task.Delay(50);
        }
        throw new TimeoutException($"timed out after {timeout.TotalSeconds:F0}s waiting for {what}; logs in {Directory}; statuses: {string.Join(" | ", Enumerable.Range(0, N).Select(i => Status(i)?.ToJson()[..200] ?? $"{i}: none"))}");
    }

    public Task WaitUntilAsync(Func<bool> condition, TimeSpan timeout, string what) =>
        WaitForAsync(() => condition() ? this : null, timeout, what);

    public Task WaitMeshAsync(IEnumerable<int> ids, TimeSpan timeout) =>
        WaitUntilAsync(() => ids.All(i => Status(i) is { ConnectedReplicas: var c } && c >= ids.Count() - 1), timeout, "replica links");

    public async Task<BftClient> ClientAsync(int index, BftClientOptions? options = null)
    {
        var id = Config.Clients[index].Id;
        var c = new BftClient(Config, id, ClusterBootstrap.LoadKey(Config, id), options ?? new BftClientOptions { Window = 16, RetransmitMs = 400 });
        _clients.Add(c);
        Assert.True(await c.WaitConnectedAsync(Enumerable.Range(0, N).Count(IsRunning), TimeSpan.FromSeconds(15)), "client could not connect");
        return c;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var c in _clients)
        {
            await c.DisposeAsync();
        }
        foreach (var p in _all)
        {
            try
            {
                if (!p.HasExited)
                {
                    p.Kill();  // SIGKILL also ends a SIGSTOPped process
                    p.WaitForExit(10_000);
                }
            }
            catch (InvalidOperationException)
            {
                // already gone
            }
            p.Dispose();
        }
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // leave it to the temp cleaner
        }
    }
}

internal static class FreePorts
{
    public static int Block(int count)
    {
        for (var attempt = 0; attempt < 100; attempt++)
        {
            var start = Random.Shared.Next(20_000, 60_000);
            var sockets = new List<System.Net.Sockets.Socket>();
            try
            {
                for (var i = 0; i < count; i++)
                {
                    var s = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
                    sockets.Add(s);
                    s.Bind(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, start + i));
                }
                return start;
            }
            catch (System.Net.Sockets.SocketException)
            {
                // taken; try another block
            }
            finally
            {
                sockets.ForEach(s => s.Dispose());
            }
        }
        throw new InvalidOperationException("no free ports");
    }
}
