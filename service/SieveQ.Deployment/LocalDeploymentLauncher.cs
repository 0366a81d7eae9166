using System.Globalization;

namespace SieveQ.Deployment;

/// <summary>How to start a local deployment.</summary>
public sealed record LaunchOptions
{
    public string LogLevel { get; init; } = "warning";
    public bool StartAgents { get; init; } = true;
    /// <summary>
    /// Runs a component in the caller's own process instead of starting one (a test hosting a compromised
    /// replica-SQ or pre-SQ, its misbehaviour in the test's project): called with the role ("replica-sq",
    /// "pre-sq") and id; true when it started the component. The launcher then waits for its health like any other.
    /// </summary>
    public Func<string, int, Task<bool>>? HostInProcess { get; init; }
    /// <summary>Further `sieveq pre-sq` options for every pre-SQ (e.g. a smaller grant for a test).</summary>
    public IReadOnlyList<string> PreSqOptions { get; init; } = [];
    /// <summary>Further arguments for one component process, by its process name (e.g. its own --metrics-listen port).</summary>
    public Func<string, IReadOnlyList<string>> ComponentArguments { get; init; } = _ => [];
    public TimeSpan StartTimeout { get; init; } = TimeSpan.FromSeconds(90);
}

/// <summary>
/// Starts every component of a deployment as its own process, in dependency order (replicas, then
/// pre-SQs, then agents), each stage only once the previous one answers its health probe; the pre-SQs side by side.
/// </summary>
public static class LocalDeploymentLauncher
{
    public static string ReplicaName(int id) => $"replica-sq-{id}";

    public static string PreSqName(int id) => $"pre-sq-{id}";

    public static string AgentName(string name) => $"agent-{name}";

    public static IReadOnlyList<string> ReplicaArgs(DeploymentConfig config, int id, LaunchOptions options)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(options);
        return [.. (string[])["replica-sq", "--deployment", config.BaseDirectory, "--id", id.ToString(CultureInfo.InvariantCulture), "--log-level", options.LogLevel],
            .. options.ComponentArguments(ReplicaName(id))];
    }

    public static IReadOnlyList<string> PreSqArgs(DeploymentConfig config, int id, LaunchOptions options)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(options);
        var args = new List<string> { "pre-sq", "--deployment", config.BaseDirectory, "--id", id.ToString(CultureInfo.InvariantCulture), "--log-level", options.LogLevel };
        args.AddRange(options.PreSqOptions);
        args.AddRange(options.ComponentArguments(PreSqName(id)));
        return args;
    }

    public static IReadOnlyList<string> AgentArgs(DeploymentConfig config, AgentEntry agent, LaunchOptions options)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(agent);
        ArgumentNullException.ThrowIfNull(options);
        return [.. (string[])["agent", "--deployment", config.BaseDirectory, "--name", agent.Name, "--log-level", options.LogLevel],
            .. options.ComponentArguments(AgentName(agent.Name))];
    }

    public static async Task LaunchAsync(DeploymentConfig config, ComponentProcesses processes, LaunchOptions options, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(processes);
        ArgumentNullException.ThrowIfNull(options);
        var probe = TimeSpan.FromSeconds(2);
        // Together: a replica started through HostInProcess (`sieveq up`: the controller's StartReplica) returns once it
        // is healthy, which takes links to 2f others, so one at a time would wait on the ones not yet started.
        await Task.WhenAll(config.Replicas.Select(async r =>
        {
            if (options.HostInProcess is null || !await options.HostInProcess("replica-sq", r.Id).ConfigureAwait(false))
            {
                processes.Start(ReplicaName(r.Id), ReplicaArgs(config, r.Id, options));
            }
        })).ConfigureAwait(false);
        await WaitAsync("replica-SQs", () => Task.WhenAll(config.Replicas.Select(r =>
            DeploymentHealth.ProbeAsync("replica-sq", r.Name, r.ApiUrl, Protocol.ProtocolNames.ReplicaSqService, probe, ct, r.Pin()))), options, processes, ct).ConfigureAwait(false);
        // Together: the pre-SQs do not depend on one another, and a start through HostInProcess (`sieveq up`: the
        // controller's StartPreSq) returns only once that pre-SQ is healthy.
        await Task.WhenAll(config.PreSqs.Select(async p =>
        {
            if (options.HostInProcess is null || !await options.HostInProcess("pre-sq", p.Id).ConfigureAwait(false))
            {
                processes.Start(PreSqName(p.Id), PreSqArgs(config, p.Id, options));
            }
        })).ConfigureAwait(false);
        await WaitAsync("pre-SQs", () => Task.WhenAll(config.PreSqs.Select(p =>
            DeploymentHealth.ProbeAsync("pre-sq", p.Name, p.Url, Protocol.ProtocolNames.PreSqService, probe, ct, p.Pin()))), options, processes, ct).ConfigureAwait(false);
        if (!options.StartAgents)
        {
            return;
        }
        foreach (var a in config.Agents)
        {
            processes.Start(AgentName(a.Name), AgentArgs(config, a, options));
        }
        await WaitAsync("agents", () => Task.WhenAll(config.Agents.Select(a =>
            DeploymentHealth.ProbeAsync("agent", a.Name, "unix:" + config.Resolve(a.Socket), Protocol.ProtocolNames.AgentService, probe, ct))), options, processes, ct).ConfigureAwait(false);
    }

    private static async Task WaitAsync(string what, Func<Task<ComponentHealth[]>> probe, LaunchOptions options, ComponentProcesses processes, CancellationToken ct)
    {
        var exited = new List<string>();
        void OnExit(string name, int code)
        {
            lock (exited)
            {
                exited.Add($"{name} (exit {code})");
            }
        }
        processes.Exited += OnExit;
        try
        {
            var deadline = DateTime.UtcNow + options.StartTimeout;
            ComponentHealth[] last = [];
            while (DateTime.UtcNow < deadline)
            {
                lock (exited)
                {
                    if (exited.Count > 0)
                    {
                        throw new DeploymentException($"{string.Join(", ", exited)} stopped while starting the {what}; see the logs in {Path.GetDirectoryName(processes.LogPath("x"))}");
                    }
                }
                last = await probe().ConfigureAwait(false);
                if (last.All(h => h.Healthy))
                {
                    return;
                }
                await Task.Delay(250, ct).ConfigureAwait(false);
            }
            throw new DeploymentException($"the {what} did not become healthy in {options.StartTimeout.TotalSeconds:0} s: "
                + string.Join("; ", last.Where(h => !h.Healthy).Select(h => $"{h.Name}: {h.Detail}")));
        }
        finally
        {
            processes.Exited -= OnExit;
        }
    }
}
