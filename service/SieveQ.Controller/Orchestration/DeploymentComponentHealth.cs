using SieveQ.Deployment;

namespace SieveQ.Controller.Orchestration;

/// <summary>
/// The health probe a local orchestrator waits on after a start: the component's own pinned Health call. For a
/// replica-SQ, healthy means serving with links to 2f others; catching up is a recovery's own wait, after the start.
/// </summary>
public static class DeploymentComponentHealth
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(2);

    public static async Task<bool> HealthyAsync(DeploymentConfig deployment, ComponentRef component, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        ComponentHealth health;
        if (component.Kind == ComponentKind.Replica)
        {
            var r = deployment.Replica(component.Id);
            health = await DeploymentHealth.ProbeAsync("replica-sq", r.Name, r.ApiUrl, Protocol.ProtocolNames.ReplicaSqService, Timeout, ct, r.Pin()).ConfigureAwait(false);
        }
        else
        {
            var p = deployment.PreSq(component.Id);
            health = await DeploymentHealth.ProbeAsync("pre-sq", p.Name, p.Url, Protocol.ProtocolNames.PreSqService, Timeout, ct, p.Pin()).ConfigureAwait(false);
        }
        return health.Healthy;
    }
}
