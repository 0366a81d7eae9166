using System.ComponentModel;
using System.Runtime.Versioning;
using System.ServiceProcess;

namespace SieveQ.Controller.Orchestration;

/// <summary>
/// Components as Windows services on the controller's machine, through the service control manager: the MSI installs
/// one pre-SQ service, <c>SieveQPreSq</c>, running `sieveq pre-sq --id [SIEVEQ_PRESQ_ID]` (installer/msi/SieveQ.wxs), so
/// the controller is told which pre-SQ id each installed service carries. The controller must run with the right to
/// start and stop those services (the MSI's SieveQController service runs as LocalSystem). Compiled on Linux, not run
/// anywhere yet: see docs/orchestration.md.
/// </summary>
[SupportedOSPlatform("windows")]
public sealed class WindowsServiceOrchestrator : IComponentOrchestrator
{
    /// <summary>The pre-SQ service as the MSI installs it.</summary>
    public const string PreSqServiceName = "SieveQPreSq";

    private readonly IReadOnlyDictionary<ComponentRef, string> _services;
    private readonly TimeSpan _timeout;

    /// <param name="services">Each component this controller may act on and the name of its service.</param>
    public WindowsServiceOrchestrator(IReadOnlyDictionary<ComponentRef, string> services, TimeSpan? timeout = null)
    {
        _services = services;
        _timeout = timeout ?? TimeSpan.FromSeconds(60);
    }

    /// <summary>The MSI's one pre-SQ service on this machine, carrying pre-SQ <paramref name="preSqId"/>.</summary>
    public static WindowsServiceOrchestrator ForInstalledPreSq(int preSqId) =>
        new(new Dictionary<ComponentRef, string> { [ComponentRef.PreSq(preSqId)] = PreSqServiceName });

    public string Name => "Windows services";

    public async Task<string> StartAsync(ComponentRef component, CancellationToken ct)
    {
        var name = ServiceOf(component);
        using var service = new ServiceController(name);
        if (Status(service) == ServiceControllerStatus.Running)
        {
            return $"service {name} already running";
        }
        try
        {
            service.Start();
        }
        catch (Exception e) when (e is InvalidOperationException or Win32Exception)
        {
            throw new OrchestratorException($"service {name} did not start: {e.Message}", e);
        }
        await WaitForAsync(service, ServiceControllerStatus.Running, ct).ConfigureAwait(false);
        return $"service {name} started";
    }

    public async Task<string> StopAsync(ComponentRef component, CancellationToken ct)
    {
        var name = ServiceOf(component);
        using var service = new ServiceController(name);
        if (Status(service) == ServiceControllerStatus.Stopped)
        {
            return $"service {name} already stopped";
        }
        try
        {
            service.Stop();
        }
        catch (Exception e) when (e is InvalidOperationException or Win32Exception)
        {
            throw new OrchestratorException($"service {name} did not stop: {e.Message}", e);
        }
        await WaitForAsync(service, ServiceControllerStatus.Stopped, ct).ConfigureAwait(false);
        return $"service {name} stopped";
    }

    private string ServiceOf(ComponentRef component) =>
        _services.TryGetValue(component, out var name) ? name : throw new OrchestratorException($"no service for {component} on this machine");

    private static ServiceControllerStatus Status(ServiceController service)
    {
        try
        {
            return service.Status;
        }
        catch (InvalidOperationException e)
        {
            throw new OrchestratorException($"service {service.ServiceName} is not installed or cannot be queried: {e.Message}", e);
        }
    }

    /// <summary>ServiceController.WaitForStatus blocks a thread; this polls instead, so the controller's threads stay free.</summary>
    private async Task WaitForAsync(ServiceController service, ServiceControllerStatus wanted, CancellationToken ct)
    {
        var deadline = DateTime.UtcNow + _timeout;
        while (true)
        {
            service.Refresh();
            if (service.Status == wanted)
            {
                return;
            }
            if (DateTime.UtcNow >= deadline)
            {
                throw new OrchestratorException($"service {service.ServiceName} is {service.Status}, not {wanted}, after {_timeout.TotalSeconds:0} s");
            }
            await Task.Delay(250, ct).ConfigureAwait(false);
        }
    }
}
