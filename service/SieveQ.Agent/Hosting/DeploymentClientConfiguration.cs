using SieveQ.Deployment;
using SieveQ.Sdk;
using SieveQ.Sieve.Hosting.Keys;

namespace SieveQ.Agent.Hosting;

/// <summary>
/// A SieveQ deployment directory seen as the SDK sees a deployment: the SDK takes a
/// <see cref="SieveQClientConfiguration"/> and knows nothing of deployment files, so the agent, the
/// CLI and the tests, which start clients from a deployment, map it here.
/// </summary>
public static class DeploymentClientConfiguration
{
    /// <summary>The endpoints with their TLS pins, enrolment, MAC epoch, key store (the deployment's PEM directory) and, without signed rule sets, the fixed routes.</summary>
    public static SieveQClientConfiguration ToClientConfiguration(this DeploymentContext ctx)
    {
        ArgumentNullException.ThrowIfNull(ctx);
        var config = ctx.Config;
        return new SieveQClientConfiguration
        {
            F = config.F,
            PreSqs = config.PreSqs.ToDictionary(p => p.Id, p => new Uri(p.Url)),
            Replicas = config.Replicas.ToDictionary(r => r.Id, r => new Uri(r.ApiUrl)),
            PreSqTlsPins = config.PreSqs.Where(p => p.Pin() is not null).ToDictionary(p => p.Id, p => p.Pin()!),
            ReplicaTlsPins = config.Replicas.Where(r => r.Pin() is not null).ToDictionary(r => r.Id, r => r.Pin()!),
            Enrolment = ctx.Enrolment,
            MacEpoch = config.MacEpoch,
            Keys = new PemFileKeyStore(config.Resolve(config.KeyDirectory)),
            // With signed rule sets the rules decide at the replicas; the fixed routes are not what they enforce.
            Routes = config.Rules is null ? [.. config.RouteList()] : null,
        };
    }
}
