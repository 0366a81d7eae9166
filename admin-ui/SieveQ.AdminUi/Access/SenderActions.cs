using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>What became of a change request.</summary>
public sealed record ActionResult(bool Sent, bool Refused, string Message, long AuditSequence = 0);

/// <summary>
/// Quarantine and readmission of a sender, for the senders page's handlers and the form endpoints alike: the
/// operator policy is checked here, on the server, for the user making the request, whatever the page showed.
/// The controller audits the request under the console's key, with the console user named in the reason.
/// </summary>
public sealed class SenderActions(IAuthorizationService authorization, IControllerGateway controller, ConsoleMetrics metrics, ILogger<SenderActions> log)
{
    public const int MaxReasonLength = 120;

    public Task<ActionResult> QuarantineAsync(ClaimsPrincipal user, uint sender, string? reason, CancellationToken ct) =>
        RunAsync(user, "quarantine", sender, reason, controller.QuarantineSenderAsync, ct);

    public Task<ActionResult> ReadmitAsync(ClaimsPrincipal user, uint sender, string? reason, CancellationToken ct) =>
        RunAsync(user, "readmit", sender, reason, controller.ReadmitSenderAsync, ct);

    private async Task<ActionResult> RunAsync(ClaimsPrincipal user, string action, uint sender, string? reason,
        Func<uint, string, CancellationToken, Task<Protocol.V1.ManagementActionReply>> call, CancellationToken ct)
    {
        var allowed = await authorization.AuthorizeAsync(user, ConsolePolicies.Operator).ConfigureAwait(false);
        var name = user.Identity?.Name ?? "?";
        if (!allowed.Succeeded)
        {
            metrics.Actions.Add(1, new("action", action), new("outcome", "refused_role"));
            log.LogWarning("console user {User} refused: {Action} sender {Sender} needs the operator role", name, action, sender);
            return new ActionResult(false, true, $"refused: {action} needs the operator role");
        }
        reason = (reason ?? "").Trim();
        if (reason.Length > MaxReasonLength || reason.Any(char.IsControl))
        {
            return new ActionResult(false, false, $"the reason is at most {MaxReasonLength} characters, without control characters");
        }
        try
        {
            var reply = await call(sender, $"console user '{name}': {reason}", ct).ConfigureAwait(false);
            metrics.Actions.Add(1, new("action", action), new("outcome", "sent"));
            return new ActionResult(true, false, $"{action} of sender {sender} recorded in the audit log (record {reply.AuditSequence}); {(reply.Applied ? "applied" : reply.Status)}", reply.AuditSequence);
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            metrics.Actions.Add(1, new("action", action), new("outcome", "failed"));
            log.LogWarning("{Action} sender {Sender} failed at the controller: {Error}", action, sender, e.Message);
            return new ActionResult(false, false, $"the controller refused or did not answer: {e.Message}");
        }
    }
}
