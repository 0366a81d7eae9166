using System.Diagnostics;
using System.Reflection;
using SieveQ.Agent.Hosting;
using SieveQ.Deployment;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A whole local deployment as real processes on loopback (4 replica-SQs, 2 pre-SQs, each `dotnet
/// sieveq.dll ...`), in a temporary directory, with senders and receivers on the in-process SDK. A
/// compromised component is the real host with a test stage plugged in, run in the test's own process.
/// Every wait is bounded; disposing stops every process it started and removes the directory
/// (kept, with the components' logs, when a test failed: the path is in the test output).
/// </summary>
internal sealed class SieveDeployment : IAsyncDisposable
{
    public const int ReceiverId = 100;

    private readonly List<IAsyncDisposable> _parties = [];
    private readonly List<IAsyncDisposable> _hosted;

    private SieveDeployment(string directory, DeploymentConfig config, ComponentProcesses processes, List<IAsyncDisposable> hosted)
    {
        _hosted = hosted;
        Directory = directory;
        Config = config;
        Processes = processes;
        Context = DeploymentContext.Load(directory);
    }

    public string Directory { get; }
    public DeploymentConfig Config { get; }
    public DeploymentContext Context { get; }
    public ComponentProcesses Processes { get; }

    /// <summary>Set by a test that passed, so the directory and its logs are removed.</summary>
    public bool Passed { get; set; }

    /// <summary>The components' log level: information, or SIEVEQ_TEST_COMPONENT_LOG_LEVEL to chase an intermittent failure.</summary>
    public static string ComponentLogLevel => Environment.GetEnvironmentVariable("SIEVEQ_TEST_COMPONENT_LOG_LEVEL") is { Length: > 0 } level ? level : "information";

    public IReadOnlyList<int> PreSqIds => Config.PreSqs.Select(p => p.Id).ToList();

    public static string SieveqDll =>
        typeof(SieveDeployment).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "SieveqDll").Value!;

    /// <param name="compromisedPreSqs">Pre-SQs to run in this process with a compromised stage.</param>
    /// <param name="compromisedReplicas">Replica-SQs to run in this process with a compromised stage.</param>
    /// <param name="startedElsewhere">Called first for each component with (deployment, role, id): true when it started the component itself.</param>
    public static async Task<SieveDeployment> StartAsync(LaunchOptions? options = null, IReadOnlyList<int>? senders = null,
        IReadOnlyDictionary<int, SieveQ.PreSq.IPassedMessageStage>? compromisedPreSqs = null,
        IReadOnlyDictionary<int, SieveQ.ReplicaSq.IOutputBodyStage>? compromisedReplicas = null, SieveQ.Sieve.Replica.ReplicaSieveOptions? sieve = null,
        byte[]? ruleSet = null, bool tls = true, Func<DeploymentConfig, string, int, Task<bool>>? startedElsewhere = null)
    {
        if (!File.Exists(SieveqDll))
        {
            throw new FileNotFoundException($"build the CLI first: {SieveqDll} is missing");
        }
        options ??= new LaunchOptions();
        options = options with { StartAgents = false, LogLevel = ComponentLogLevel };
        var dir = System.IO.Directory.CreateTempSubdirectory("sieveq-sieve-").FullName;
        var spec = new LocalDeploymentSpec
        {
            BasePort = PortPlan.FindFreeBase(4, 2),
            Senders = senders ?? [1, 2],
            Receivers = [ReceiverId],
            Durability = true,
            Sieve = sieve,
            RuleSet = ruleSet,
            Tls = tls,
        };
        var config = DeploymentBootstrap.Create(dir, spec);
        var processes = new ComponentProcesses(Command, Path.Combine(dir, "logs"));
        var hosted = new List<IAsyncDisposable>();
        async Task<bool> HostAsync(string role, int id)
        {
            // The caller's own hook first (a test whose controller starts the pre-SQs).
            if (startedElsewhere is not null && await startedElsewhere(config, role, id))
            {
                return true;
            }
            if (role == "pre-sq" && compromisedPreSqs?.GetValueOrDefault(id) is { } passed)
            {
                var host = SieveQ.PreSq.PreSqHost.Create(DeploymentContext.Load(dir), id, passed: passed);
                hosted.Add(host);
                await host.StartAsync();
                return true;
            }
            if (role == "replica-sq" && compromisedReplicas?.GetValueOrDefault(id) is { } bodies)
            {
                var host = SieveQ.ReplicaSq.ReplicaSqHost.Create(DeploymentContext.Load(dir), id, bodies: bodies);
                hosted.Add(host);
                await host.StartAsync();
                return true;
            }
            return false;
        }
        try
        {
            await LocalDeploymentLauncher.LaunchAsync(config, processes, options with { HostInProcess = HostAsync });
        }
        catch
        {
            await StopHostedAsync(hosted);
            await processes.DisposeAsync();
            throw;
        }
        return new SieveDeployment(dir, config, processes, hosted);
    }

    private static ProcessStartInfo Command(IReadOnlyList<string> args)
    {
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false };
        psi.ArgumentList.Add(SieveqDll);
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        return psi;
    }

    public SieveQSender Sender(int id, SieveQSenderOptions? options = null)
    {
        var s = SieveQSender.Create(Context.ToClientConfiguration(), id, Path.Combine(Directory, "parties"), options);
        _parties.Add(s);
        return s;
    }

    public SieveQReceiver Receiver(SieveQReceiverOptions? options = null)
    {
        var r = SieveQReceiver.Create(Context.ToClientConfiguration(), ReceiverId, Path.Combine(Directory, "parties", "receiver"), options);
        _parties.Add(r);
        return r;
    }

    /// <summary>Disposes a party early (a restart), so disposal at the end does not touch it again.</summary>
    public async ValueTask RetireAsync(IAsyncDisposable party)
    {
        _parties.Remove(party);
        await party.DisposeAsync();
    }

    public Task<ComponentHealth> ReplicaHealthAsync(int id) =>
        DeploymentHealth.ProbeAsync("replica-sq", $"replica-sq-{id}", Config.Replicas.Single(r => r.Id == id).ApiUrl, Protocol.ProtocolNames.ReplicaSqService, TimeSpan.FromSeconds(5),
            pin: Config.Replicas.Single(r => r.Id == id).Pin());

    public Task<ComponentHealth> PreSqHealthAsync(int id) =>
        DeploymentHealth.ProbeAsync("pre-sq", $"pre-sq-{id}", Config.PreSqs.Single(p => p.Id == id).Url, Protocol.ProtocolNames.PreSqService, TimeSpan.FromSeconds(5),
            pin: Config.PreSqs.Single(p => p.Id == id).Pin());

    /// <summary>The replica that leads the current regency, as the replicas report it (regency mod n).</summary>
    public async Task<int> LeaderAsync()
    {
        var h = await ReplicaHealthAsync(0);
        return (int)(h.Counters["regency"] % Config.N);
    }

    /// <summary>Starts the replicas' processes again, as the launcher did, and waits until every one answers healthy.</summary>
    public async Task RestartReplicasAsync(IEnumerable<int> ids, TimeSpan timeout)
    {
        var list = ids.ToList();
        foreach (var id in list)
        {
            Processes.Start(LocalDeploymentLauncher.ReplicaName(id), LocalDeploymentLauncher.ReplicaArgs(Config, id, new LaunchOptions { LogLevel = ComponentLogLevel }));
        }
        var deadline = DateTime.UtcNow + timeout;
        foreach (var id in list)
        {
            ComponentHealth h;
            while (!(h = await ReplicaHealthAsync(id)).Healthy)
            {
                if (DateTime.UtcNow > deadline)
                {
                    throw new TimeoutException($"replica-SQ {id} did not come back healthy within {timeout}: {h.Detail}");
                }
                await Task.Delay(200);
            }
        }
    }

    /// <summary>
    /// Stops every component the way `sieveq up` does on SIGTERM (each in turn, with its grace) and launches them again on
    /// the same folder, as the next `sieveq up` does; returns once every one answers healthy. Components hosted in this
    /// process are not restarted.
    /// </summary>
    public async Task RestartAllAsync()
    {
        if (_hosted.Count > 0)
        {
            throw new InvalidOperationException("a deployment with in-process components cannot be restarted as a whole");
        }
        await Processes.StopAllAsync(TimeSpan.FromSeconds(10));
        await LocalDeploymentLauncher.LaunchAsync(Config, Processes, new LaunchOptions { StartAgents = false, LogLevel = ComponentLogLevel });
    }

    /// <summary>kill -9: no chance to flush or say goodbye.</summary>
    public Task KillReplicaAsync(int id) => Processes.StopAsync(LocalDeploymentLauncher.ReplicaName(id), TimeSpan.Zero, kill: true);

    /// <summary>Every component's health line and counters, for a failing test's output.</summary>
    public async Task<string> DescribeAsync()
    {
        var all = await DeploymentHealth.ProbeAllAsync(Config with { Agents = [] }, TimeSpan.FromSeconds(3));
        return string.Join(Environment.NewLine, all.Select(h =>
            $"{h.Name} healthy={h.Healthy} {h.Detail}: " + string.Join(" ", h.Counters.Where(kv => kv.Value != 0).OrderBy(kv => kv.Key, StringComparer.Ordinal).Select(kv => $"{kv.Key}={kv.Value}"))));
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var p in Enumerable.Reverse(_parties))
        {
            try
            {
                await p.DisposeAsync();
            }
#pragma warning disable CA1031 // disposal goes on for the rest
            catch (Exception)
#pragma warning restore CA1031
            {
            }
        }
        await StopHostedAsync(_hosted);
        await Processes.StopAllAsync(TimeSpan.FromSeconds(5));
        if (Passed)
        {
            try
            {
                System.IO.Directory.Delete(Directory, recursive: true);
            }
            catch (IOException)
            {
                // a component still flushing; the temp folder is the OS's to clean
            }
        }
    }

    private static async Task StopHostedAsync(List<IAsyncDisposable> hosted)
    {
        foreach (var h in Enumerable.Reverse(hosted))
        {
            await h.DisposeAsync();
        }
        hosted.Clear();
    }
}
