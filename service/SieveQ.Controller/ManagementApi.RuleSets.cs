using Microsoft.AspNetCore.Routing;
using SieveQ.Controller.Access;
using SieveQ.Controller.RuleSets;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Rules;
using SieveQ.Transport;

namespace SieveQ.Controller;

/// <summary>What the rule-set calls need: the ordering (null when the controller holds no command key), the archive of known versions, the signature policy.</summary>
public sealed record RuleSetDesk(IRuleSetOrdering? Ordering, RuleSetArchive? Archive, bool RequireSigned = false);

/// <summary>
/// PushRuleSet, RollbackRuleSet and DryRunRuleSet. A push or rollback is checked here first (so a malformed upload costs
/// the deployment nothing and the operator gets the reason), then ordered with the administrator key through the same
/// submitter as quarantines; the replicas decide and f+1 of them give the outcome. Each step is an audit record.
/// </summary>
public sealed partial class ManagementApi
{
    /// <summary>A rule set, its signature and a reason, or a rule set and its samples, with room for the envelope.</summary>
    public const int MaxRuleSetRequestBytes = RuleSetCheck.MaxDocumentBytes + 64 * 1024;

    private void MapRuleSetCalls(IEndpointRouteBuilder routes)
    {
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, ControllerNames.PushRuleSet, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.PushRuleSet, ManagementRole.Operator, RuleSetPushRequest.Parser, audited: true, PushRuleSetAsync), MaxRuleSetRequestBytes);
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, ControllerNames.RollbackRuleSet, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.RollbackRuleSet, ManagementRole.Operator, RuleSetRollbackRequest.Parser, audited: true, RollbackRuleSetAsync), MaxRequestBytes);
        routes.MapGrpcMethod<SignedManagementRequest, RuleSetDryRunReply>(ControllerNames.Service, ControllerNames.DryRunRuleSet, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.DryRunRuleSet, ManagementRole.Operator, RuleSetDryRunRequest.Parser, audited: false, DryRunRuleSetAsync), MaxRuleSetRequestBytes);
    }

    private async Task<ManagementActionReply> PushRuleSetAsync(CallerIdentity caller, RuleSetPushRequest request, CancellationToken ct)
    {
        const string action = "push-rule-set";
        CheckReason(request.Reason);
        CompiledRuleSet compiled;
        try
        {
            compiled = RuleSetCheck.Check(request.Document.Memory, request.Signature.Span, _ruleSets.Ordering?.Administrator, _ruleSets.RequireSigned);
        }
        catch (RuleSetCheckException e)
        {
            await _audit.AppendAsync(caller.AuditActor, action, WithReason($"rule set of {request.Document.Length} bytes", request.Reason), "refused: " + Truncate(e.Message, 900), ct).ConfigureAwait(false);
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "rule set refused: " + e.Message);
        }
        var target = WithReason($"rule set {compiled.Document.Name ?? "(unnamed)"} version {compiled.Version} (sha256 {compiled.DigestHex})", request.Reason);
        return await OrderRuleSetAsync(caller, action, target, compiled, request.Signature.IsEmpty ? null : request.Signature.ToByteArray(),
            request.Document.ToByteArray(), ct).ConfigureAwait(false);
    }

    private Task<ManagementActionReply> RollbackRuleSetAsync(CallerIdentity caller, RuleSetRollbackRequest request, CancellationToken ct)
    {
        CheckReason(request.Reason);
        return OrderRuleSetAsync(caller, "rollback-rule-set", WithReason("running rule set", request.Reason), null, null, null, ct);
    }

    /// <summary>A push when <paramref name="compiled"/> is given, else a rollback.</summary>
    private async Task<ManagementActionReply> OrderRuleSetAsync(CallerIdentity caller, string action, string target, CompiledRuleSet? compiled,
        byte[]? sidecar, byte[]? json, CancellationToken ct)
    {
        if (_ruleSets.Ordering is not { } ordering)
        {
            var unapplied = await _audit.AppendAsync(caller.AuditActor, action, target, NoCommandKey, ct).ConfigureAwait(false);
            return new ManagementActionReply { Applied = false, Status = NoCommandKey, AuditSequence = unapplied.Sequence };
        }
        RulesState state;
        try
        {
            state = await ordering.ReadStateAsync(ct).ConfigureAwait(false);
        }
        catch (RuleSetPublishException e)
        {
            var unread = await _audit.AppendAsync(caller.AuditActor, action, target, "not applied: " + Truncate(e.Message, 900), ct).ConfigureAwait(false);
            return new ManagementActionReply { Applied = false, Status = "not applied: " + e.Message, AuditSequence = unread.Sequence };
        }
        var refusal = compiled is not null
            ? compiled.Version <= state.ActiveVersion ? $"version {compiled.Version} is not above the running version {state.ActiveVersion}; a push needs a higher version (or roll back)" : null
            : state.PreviousVersion < 1 ? $"nothing to roll back to: version {state.ActiveVersion} runs and no earlier version is kept" : null;
        if (refusal is not null)
        {
            await _audit.AppendAsync(caller.AuditActor, action, target, "refused: " + refusal, ct).ConfigureAwait(false);
            throw new GrpcCallException(GrpcStatusCode.FailedPrecondition, refusal);
        }
        var switchText = compiled is not null ? $"version {state.ActiveVersion} -> {compiled.Version}" : $"version {state.ActiveVersion} -> {state.PreviousVersion}";
        await _audit.AppendAsync(caller.AuditActor, action, target, $"submitted to the ordering ({switchText})", ct).ConfigureAwait(false);
        // The outcome is recorded even when the caller hangs up: the switch may have been applied.
        var outcome = compiled is not null
            ? await ordering.PushAsync(json!, sidecar, state, CancellationToken.None).ConfigureAwait(false)
            : await ordering.RollbackAsync(state, CancellationToken.None).ConfigureAwait(false);
        if (outcome.Applied && compiled is not null)
        {
            _ruleSets.Archive?.Keep(compiled);
        }
        var status = outcome.Applied ? $"{outcome.Status} (agreed by f+1 replicas, via {outcome.Via})" : outcome.Status;
        var record = await _audit.AppendAsync(caller.AuditActor, action, target, Truncate((outcome.Applied ? "applied: " : "not applied: ") + status, 1000),
            CancellationToken.None).ConfigureAwait(false);
        return new ManagementActionReply { Applied = outcome.Applied, Status = status, AuditSequence = record.Sequence };
    }

    private async Task<RuleSetDryRunReply> DryRunRuleSetAsync(CallerIdentity caller, RuleSetDryRunRequest request, CancellationToken ct)
    {
        var reply = new RuleSetDryRunReply();
        CompiledRuleSet compiled;
        try
        {
            compiled = RuleSetCheck.Check(request.Document.Memory, request.Signature.Span, _ruleSets.Ordering?.Administrator, requireSigned: false);
        }
        catch (RuleSetCheckException e)
        {
            reply.Valid = false;
            reply.Error = e.Message;
            return reply;
        }
        IReadOnlyList<Rules.Evaluation.RuleDecision> decisions;
        try
        {
            decisions = RuleSetDryRun.Decide(compiled, request.Samples, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        }
        catch (RuleSetCheckException e)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, e.Message);
        }
        reply.Valid = true;
        reply.Version = compiled.Version;
        reply.Name = compiled.Document.Name ?? "";
        reply.Digest = compiled.DigestHex;
        reply.Canonical = System.Text.Encoding.UTF8.GetString(compiled.Document.CanonicalBytes);
        foreach (var d in decisions)
        {
            reply.Outcomes.Add(new RuleSetSampleOutcome { Allowed = d.Allowed, Rule = d.Rule, Detail = d.Detail ?? "" });
        }
        if (_ruleSets.Ordering is not { } ordering)
        {
            reply.RunningError = "this controller holds no administrator command key (controller.json commandKeyFile), so it does not follow the running version";
            return reply;
        }
        try
        {
            var state = await ordering.ReadStateAsync(ct).ConfigureAwait(false);
            reply.RunningVersion = state.ActiveVersion;
            reply.RunningCanonical = _ruleSets.Archive?.Canonical(state.ActiveVersion) ?? "";
            if (reply.RunningCanonical.Length == 0)
            {
                reply.RunningError = $"version {state.ActiveVersion} runs, but this controller does not have its document (pushed with `sieveq rules push`?)";
            }
        }
        catch (RuleSetPublishException e)
        {
            reply.RunningError = e.Message;
        }
        return reply;
    }

    private static void CheckReason(string reason)
    {
        if (reason.Length > MaxReasonLength || reason.Any(char.IsControl))
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"the reason is at most {MaxReasonLength} characters, without control characters");
        }
    }

    private static string WithReason(string target, string reason) => string.IsNullOrEmpty(reason) ? target : $"{target} (reason: {Truncate(reason, MaxReasonLength)})";
}
