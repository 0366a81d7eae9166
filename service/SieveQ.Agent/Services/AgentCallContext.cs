using Microsoft.Extensions.Logging;
using SieveQ.Agent.Hosting;
using SieveQ.Agent.Identity;
using SieveQ.Deployment;
using SieveQ.Firewall.Enforcement;
using SieveQ.Sdk;
using SieveQ.Sdk.Sender;
using SieveQ.Transport;

namespace SieveQ.Agent.Services;

/// <summary>What every sieveq.v1.Agent handler needs: the agent's entry, who may call, and the hosted parties.</summary>
internal sealed record AgentCallContext(
    AgentEntry Entry,
    CallerPolicy Policy,
    ConnectedPeers Peers,
    PartyRegistry<SieveQSender> Senders,
    PartyRegistry<HostedReceiver> Receivers,
    ILogger Log)
{
    /// <summary>Layer 0, when the agent runs it; its counters go into Health.</summary>
    public FirewallEnforcer? Firewall { get; init; }

    /// <summary>Follows the policy's rule-set location; null when the agent runs without a policy.</summary>
    public PublishedRuleSetFollower? RuleSets { get; init; }

    /// <summary>
    /// Starts a hosted party; a deployment problem (keys missing, state directory in use, the id held by another
    /// process) becomes FailedPrecondition with the reason.
    /// </summary>
    public static async Task<T> StartAsync<T>(Func<Task<T>> start, string role, int id)
    {
        try
        {
            return await start().ConfigureAwait(false);
        }
        catch (Exception e) when (e is DeploymentException or SieveQConfigurationException or IOException or UnauthorizedAccessException or Sieve.Keys.KeyStoreException
            or IdHeldException)
        {
            throw new GrpcCallException(GrpcStatusCode.FailedPrecondition, $"{role} {id} cannot start: {e.Message}");
        }
    }
}
