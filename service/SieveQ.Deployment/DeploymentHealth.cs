using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SieveQ.Transport.Tls;

namespace SieveQ.Deployment;

/// <summary>One component's answer to a health probe (or why there was none).</summary>
public sealed record ComponentHealth(string Component, string Name, string Endpoint, bool Reachable, bool Healthy, string Detail, IReadOnlyDictionary<string, long> Counters);

/// <summary>Asks every component of a deployment for its health over its own gRPC endpoint.</summary>
public static class DeploymentHealth
{
    public static async Task<IReadOnlyList<ComponentHealth>> ProbeAllAsync(DeploymentConfig config, TimeSpan timeout, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(config);
        var probes = new List<Task<ComponentHealth>>();
        probes.AddRange(config.Replicas.Select(r => ProbeAsync("replica-sq", r.Name, r.ApiUrl, ProtocolNames.ReplicaSqService, timeout, ct, r.Pin())));
        probes.AddRange(config.PreSqs.Select(p => ProbeAsync("pre-sq", p.Name, p.Url, ProtocolNames.PreSqService, timeout, ct, p.Pin())));
        probes.AddRange(config.Agents.Select(a => ProbeAsync("agent", a.Name, "unix:" + config.Resolve(a.Socket), ProtocolNames.AgentService, timeout, ct)));
        return await Task.WhenAll(probes).ConfigureAwait(false);
    }

    public static async Task<ComponentHealth> ProbeAsync(string component, string name, string endpoint, string service, TimeSpan timeout, CancellationToken ct = default, TlsPin? pin = null)
    {
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(ct);
        cts.CancelAfter(timeout);
        try
        {
            if (endpoint.StartsWith("unix:", StringComparison.Ordinal) && !File.Exists(endpoint[5..]))
            {
                return new ComponentHealth(component, name, endpoint, false, false, "socket not present", new Dictionary<string, long>());
            }
            using var channel = endpoint.StartsWith("unix:", StringComparison.Ordinal)
                ? GrpcChannel.ForUnixSocket(endpoint[5..])
                : GrpcChannel.ForAddress(new Uri(endpoint), pin);
            var reply = await channel.UnaryAsync(service, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser, cts.Token).ConfigureAwait(false);
            return new ComponentHealth(component, name, endpoint, true, reply.Healthy, reply.Detail, reply.Counters.ToDictionary(kv => kv.Key, kv => kv.Value));
        }
        catch (Exception e) when (e is GrpcCallException or HttpRequestException or IOException or OperationCanceledException or System.Net.Sockets.SocketException)
        {
            return new ComponentHealth(component, name, endpoint, false, false, e.Message, new Dictionary<string, long>());
        }
    }

    /// <summary>Polls until every listed component answers healthy, or the timeout passes.</summary>
    public static async Task<bool> WaitHealthyAsync(Func<Task<IReadOnlyList<ComponentHealth>>> probe, TimeSpan timeout, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(probe);
        var deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline)
        {
            var all = await probe().ConfigureAwait(false);
            if (all.All(h => h.Healthy))
            {
                return true;
            }
            await Task.Delay(200, ct).ConfigureAwait(false);
        }
        return false;
    }
}
