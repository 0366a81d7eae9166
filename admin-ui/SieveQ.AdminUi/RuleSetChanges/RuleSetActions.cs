using System.Security.Claims;
using Google.Protobuf;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;
using SieveQ.Controller.RuleSets;
using SieveQ.Protocol.V1;
using SieveQ.Rules.Signing;

namespace SieveQ.AdminUi.RuleSetChanges;

/// <summary>What the controller said of an upload: its check, the diff against the running version, each sample's verdict.</summary>
public sealed record RuleSetReview(bool Refused, string Message, RuleSetDryRunReply? Reply, IReadOnlyList<DiffLine> Diff);

/// <summary>
/// Rule-set review (check, diff, dry run), push and rollback for the page's handlers and the form endpoints alike: the
/// operator policy is checked here, on the server, for the user making the request, whatever the page showed. The
/// controller audits pushes and rollbacks under the console's key, with the console user named in the reason.
/// </summary>
public sealed class RuleSetActions(IAuthorizationService authorization, IControllerGateway controller, ConsoleMetrics metrics, ILogger<RuleSetActions> log)
{
    public const int MaxDocumentBytes = RuleSetCheck.MaxDocumentBytes;
    public const int MaxSignatureBytes = SignatureSidecar.MaxBytes;

    public async Task<RuleSetReview> ReviewAsync(ClaimsPrincipal user, byte[] document, byte[] signature, string? samples, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(document);
        ArgumentNullException.ThrowIfNull(signature);
        if (await RefusedAsync(user, "review").ConfigureAwait(false) is { } refused)
        {
            return new RuleSetReview(true, refused, null, []);
        }
        if (Oversize(document, signature) is { } size)
        {
            return new RuleSetReview(false, size, null, []);
        }
        var (parsed, error) = SampleMessages.Parse(samples);
        if (error is not null)
        {
            return new RuleSetReview(false, "samples: " + error, null, []);
        }
        var request = new RuleSetDryRunRequest { Document = ByteString.CopyFrom(document), Signature = ByteString.CopyFrom(signature) };
        request.Samples.AddRange(parsed);
        try
        {
            var reply = await controller.DryRunRuleSetAsync(request, ct).ConfigureAwait(false);
            metrics.Actions.Add(1, new("action", "review-rule-set"), new("outcome", reply.Valid ? "valid" : "invalid"));
            var diff = reply.Valid && reply.RunningCanonical.Length > 0 ? CanonicalDiff.Lines(reply.RunningCanonical, reply.Canonical) : [];
            return new RuleSetReview(false, reply.Valid ? "the rule set passes every check" : "refused: " + reply.Error, reply, diff);
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            metrics.Actions.Add(1, new("action", "review-rule-set"), new("outcome", "failed"));
            log.LogWarning("rule-set review failed at the controller: {Error}", e.Message);
            return new RuleSetReview(false, $"the controller refused or did not answer: {e.Message}", null, []);
        }
    }

    public async Task<ActionResult> PushAsync(ClaimsPrincipal user, byte[] document, byte[] signature, string? reason, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(document);
        ArgumentNullException.ThrowIfNull(signature);
        if (await RefusedAsync(user, "push").ConfigureAwait(false) is { } refused)
        {
            return new ActionResult(false, true, refused);
        }
        if (Oversize(document, signature) is { } size)
        {
            return new ActionResult(false, false, "not sent: " + size);
        }
        return await SendAsync(user, "push", reason, r => controller.PushRuleSetAsync(document, signature, r, ct)).ConfigureAwait(false);
    }

    public async Task<ActionResult> RollbackAsync(ClaimsPrincipal user, string? reason, CancellationToken ct)
    {
        if (await RefusedAsync(user, "rollback").ConfigureAwait(false) is { } refused)
        {
            return new ActionResult(false, true, refused);
        }
        return await SendAsync(user, "rollback", reason, r => controller.RollbackRuleSetAsync(r, ct)).ConfigureAwait(false);
    }

    private async Task<string?> RefusedAsync(ClaimsPrincipal user, string action)
    {
        var allowed = await authorization.AuthorizeAsync(user, ConsolePolicies.Operator).ConfigureAwait(false);
        if (allowed.Succeeded)
        {
            return null;
        }
        metrics.Actions.Add(1, new("action", action + "-rule-set"), new("outcome", "refused_role"));
        log.LogWarning("{User} refused: {Action} of a rule set needs the operator role", ConsoleCaller.Of(user), action);
        return $"refused: a rule-set {action} needs the operator role";
    }

    private static string? Oversize(byte[] document, byte[] signature) =>
        document.Length > MaxDocumentBytes ? $"the rule set is {document.Length} bytes; at most {MaxDocumentBytes}"
        : signature.Length > MaxSignatureBytes ? $"the signature file is {signature.Length} bytes; at most {MaxSignatureBytes}"
        : document.Length == 0 ? "no rule set uploaded" : null;

    private async Task<ActionResult> SendAsync(ClaimsPrincipal user, string action, string? reason, Func<string, Task<ManagementActionReply>> call)
    {
        var metric = action + "-rule-set";
        reason = (reason ?? "").Trim();
        var name = AttributedReason.UserOf(user);
        if (AttributedReason.Problem(name, reason) is { } problem)
        {
            metrics.Actions.Add(1, new("action", metric), new("outcome", "invalid"));
            return new ActionResult(false, false, "not sent: " + problem);
        }
        try
        {
            var reply = await call(AttributedReason.Of(name, reason)).ConfigureAwait(false);
            metrics.Actions.Add(1, new("action", metric), new("outcome", reply.Applied ? "applied" : "not_applied"));
            return new ActionResult(true, false, $"{action} recorded in the audit log (record {reply.AuditSequence}); {(reply.Applied ? "APPLIED: " : "")}{reply.Status}", reply.AuditSequence);
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            metrics.Actions.Add(1, new("action", metric), new("outcome", "failed"));
            log.LogWarning("rule-set {Action} failed at the controller: {Error}", action, e.Message);
            return new ActionResult(false, false, $"the controller refused or did not answer: {e.Message}");
        }
    }
}
