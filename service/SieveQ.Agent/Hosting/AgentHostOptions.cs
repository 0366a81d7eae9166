using SieveQ.Policy.Hosting;
using SieveQ.Firewall.Enforcement;
using SieveQ.Policy;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;

namespace SieveQ.Agent.Hosting;

/// <summary>Tunables of an agent beyond what the deployment file says.</summary>
public sealed record AgentHostOptions
{
    public SieveQSenderOptions Sender { get; init; } = new();

    /// <summary>The agent commits only what applications commit; auto-commit options are ignored.</summary>
    public SieveQReceiverOptions Receiver { get; init; } = new();

    /// <summary>Deliveries an application may hold uncommitted before the agent stops sending it more.</summary>
    /// <summary>How long starting a sender or receiver waits for the deployment to confirm it (null: the SDK's 10 s) before it starts without.</summary>
    public TimeSpan? ConnectTimeout { get; init; }

    /// <summary>How often a sender or receiver that started without its id lease (the deployment did not answer) asks for it again.</summary>
    public TimeSpan LeaseRetryEvery { get; init; } = TimeSpan.FromSeconds(10);

    public int MaxUncommittedDeliveries { get; init; } = 8192;

    /// <summary>Socket path (pipe name on Windows) instead of the deployment's, e.g. for tests.</summary>
    public string? Endpoint { get; init; }

    /// <summary>Layer 0 (the WFP driver, or its core in-process off Windows); null: the agent runs no firewall.</summary>
    public FirewallOptions? Firewall { get; init; }

    /// <summary>The effective agent policy: the firewall enforces it and its rule-set location is followed; null: the not-configured policy.</summary>
    public PolicyMonitor? Policy { get; init; }

    /// <summary>How often the policy's rule-set location is read again while the policy does not change.</summary>
    public TimeSpan RuleSetPollInterval { get; init; } = TimeSpan.FromMinutes(5);
}
