using SieveQ.Controller;
using SieveQ.Controller.Access;
using SieveQ.Controller.Orchestration;
using SieveQ.Deployment;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// The controller as under `sieveq up`: its controller.json written before the first component starts (so the
/// replica-SQs report their notices to it), the controller started (`--launch-plan`) when the launcher reaches the
/// first component it owns, and each such component started by it: the pre-SQs, and with <paramref name="ownsReplicas"/>
/// the replica-SQs too (as `up` does; without, they stay the launcher's, started before the controller). Disposing it
/// stops the controller, which stops them.
/// </summary>
internal sealed class ControllerOwner(ITestOutputHelper output, bool ownsReplicas = false) : IAsyncDisposable
{
    private readonly SemaphoreSlim _starting = new(1, 1);
    private ComponentProcesses? _processes;
    private ManagementClient? _client;
    private System.Security.Cryptography.ECDsa? _key;

    public async Task<bool> HostAsync(DeploymentConfig config, string role, int id)
    {
        // A replica-SQ reads controller.json once, at its start: without it, it reports no notice to anyone.
        ControllerConfig.EnsureLocal(config);
        if (role != "pre-sq" && !(role == "replica-sq" && ownsReplicas))
        {
            return false;
        }
        // The launcher starts components side by side: one controller for all of them.
        await _starting.WaitAsync();
        try
        {
            if (_client is null)
            {
                await StartAsync(config);
            }
        }
        finally
        {
            _starting.Release();
        }
        var reply = role == "pre-sq"
            ? await _client!.PreSqLifecycleAsync(ControllerNames.StartPreSq, (uint)id, "test start")
            : await _client!.ReplicaLifecycleAsync(ControllerNames.StartReplica, (uint)id, "test start");
        Assert.True(reply.Applied, reply.Status);
        return true;
    }

    private async Task StartAsync(DeploymentConfig config)
    {
        var dir = config.BaseDirectory;
        var controller = ControllerConfig.EnsureLocal(config);
        var plan = Path.Combine(dir, LocalLaunchPlan.FileName);
        LocalLaunchPlan.For(config, new LaunchOptions { LogLevel = "information" }).Save(plan);
        _processes = new ComponentProcesses(AdminProcess.Command, Path.Combine(dir, "logs"));
        _processes.Start("controller", ["controller", "--deployment", dir, "--launch-plan", plan, "--log-level", "Information"]);
        var healthy = await DeploymentHealth.WaitHealthyAsync(
            async () => [await DeploymentHealth.ProbeAsync("controller", "controller", controller.Url, ControllerNames.Service, TimeSpan.FromSeconds(1), default, controller.Pin())],
            TimeSpan.FromMinutes(1), default);
        Assert.True(healthy, "the controller did not start; see " + _processes.LogPath("controller"));
        output.WriteLine($"controller {controller.Url}");
        _key = ManagementKeyFile.Read(ControllerConfig.LocalKeyFile(config, ManagementRole.Administrator));
        _client = new ManagementClient(new Uri(controller.Url), _key, pin: controller.Pin());
    }

    public async ValueTask DisposeAsync()
    {
        _client?.Dispose();
        _key?.Dispose();
        if (_processes is not null)
        {
            await _processes.DisposeAsync();
        }
    }
}
