using SieveQ.Rules.Signing;

namespace SieveQ.Deployment;

/// <summary>
/// Rule-set switches ordered by a process that holds the administrator key (the controller): what its management API
/// needs from the deployment, so the API can be tested without one.
/// </summary>
public interface IRuleSetOrdering
{
    /// <summary>The key the replicas pin: a rule set's own signature must be by it.</summary>
    SignerKey Administrator { get; }

    /// <summary>The running version as f+1 replicas report it; throws <see cref="RuleSetPublishException"/> when they do not agree.</summary>
    Task<RulesState> ReadStateAsync(CancellationToken ct);

    /// <summary>Orders the activation of <paramref name="json"/> in place of <paramref name="state"/>'s version; a null sidecar has the holder sign the document.</summary>
    Task<AdminCommandReport> PushAsync(byte[] json, byte[]? sidecar, RulesState state, CancellationToken ct);

    /// <summary>Orders the switch back to the version kept before <paramref name="state"/>'s.</summary>
    Task<AdminCommandReport> RollbackAsync(RulesState state, CancellationToken ct);
}
