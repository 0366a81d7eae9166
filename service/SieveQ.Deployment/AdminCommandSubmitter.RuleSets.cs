using SieveQ.Rules.Document;
using SieveQ.Rules.Signing;

namespace SieveQ.Deployment;

/// <summary>
/// Rule-set pushes and rollbacks with the same key and the same one-at-a-time gate as the party commands: the command is
/// built by <see cref="RuleSetPublisher"/> (as `sieveq rules push` builds it) and carried by the first pre-SQ that takes it.
/// </summary>
public sealed partial class AdminCommandSubmitter : IRuleSetOrdering
{
    public SignerKey Administrator => SignerKey.Of(_administrator);

    public Task<RulesState> ReadStateAsync(CancellationToken ct) => RuleSetPublisher.ReadStateAsync(_config, ct);

    public Task<AdminCommandReport> PushAsync(byte[] json, byte[]? sidecar, RulesState state, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(json);
        return OrderRuleSetAsync(() =>
        {
            // No sidecar: the holder of the administrator key vouches for the document, as `sieveq up` does for the initial one.
            sidecar ??= SignCanonical(json);
            return RuleSetPublisher.BuildPush("the rule set", json, sidecar, _administrator, _config, state).Command;
        }, ct);
    }

    public Task<AdminCommandReport> RollbackAsync(RulesState state, CancellationToken ct) =>
        OrderRuleSetAsync(() => RuleSetPublisher.BuildRollback(_administrator, _config, state), ct);

    private byte[] SignCanonical(byte[] json)
    {
        using var doc = RuleSetParser.ReadJson(json);
        return RuleSetSigner.Sign(RuleSetParser.Canonicalize(doc.RootElement), _administrator).ToJson();
    }

    private async Task<AdminCommandReport> OrderRuleSetAsync(Func<byte[]> build, CancellationToken ct)
    {
        await _one.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            var command = build();
            var (result, via) = await RuleSetPublisher.SubmitAsync(_config, command, _timeout, ct).ConfigureAwait(false);
            return new AdminCommandReport(result.Applied, result.Reason, via);
        }
        catch (RuleSetPublishException e)
        {
            return new AdminCommandReport(false, "not applied: " + e.Message, null);
        }
        finally
        {
            _one.Release();
        }
    }
}
