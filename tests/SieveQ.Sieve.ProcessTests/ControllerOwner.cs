using SieveQ.Controller;
using SieveQ.Controller.Access;
using SieveQ.Controller.Orchestration;
using SieveQ.Deployment;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// The controller as under `sieveq up`: its controller.json written before the first component starts (so the
/// replica-SQs report their notices to it), the controller started (`--launch-plan`) once the replica-SQs are healthy,
/// when the launcher reaches the first pre-SQ, and each pre-SQ started by it; disposing it stops the controller, which
/// stops them.
/// </summary>
internal sealed class ControllerOwner(ITestOutputHelper output) : IAsyncDisposable
{
    private ComponentProcesses? _processes;
    private ManagementClient? _client;
    private System.Security.Cryptography.ECDsa? _key;

    public async Task<bool> HostAsync(DeploymentConfig config, string role, int id)
    {
        // A replica-SQ reads controller.json once, at its start: without it, it reports no notice to anyone.
        ControllerConfig.EnsureLocal(config);
        if (role != "pre-sq")
        {
            return false;
        }
        if (_client is null)
        {
            await StartAsync(config);
        }
        var reply = await _client!.PreSqLifecycleAsync(ControllerNames.StartPreSq, (uint)id, "test start");
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
