using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Access;

/// <summary>What became of a change request.</summary>
public sealed record ActionResult(bool Sent, bool Refused, string Message, long AuditSequence = 0);

/// <summary>
/// Quarantine and readmission of a sender or a pre-SQ, for the pages' handlers and the form endpoints alike: the
/// operator policy is checked here, on the server, for the user making the request, whatever the page showed; the
/// party must be one of the deployment's. The controller audits the request under the console's key, with the console
/// user named in the reason.
/// </summary>
public sealed class PartyActions(IAuthorizationService authorization, IControllerGateway controller, DeploymentConfig deployment,
    ConsoleMetrics metrics, ILogger<PartyActions> log)
{
    /// <summary>What the reason fields take (<see cref="AttributedReason"/>): the same for every change the console sends.</summary>
    public static readonly int MaxReasonLength = AttributedReason.MaxTextLength;

    public Task<ActionResult> QuarantineSenderAsync(ClaimsPrincipal user, uint sender, string? reason, CancellationToken ct) =>
        RunAsync(user, "quarantine", Party.Sender(sender, deployment), reason, controller.QuarantineSenderAsync, ct);

    public Task<ActionResult> ReadmitSenderAsync(ClaimsPrincipal user, uint sender, string? reason, CancellationToken ct) =>
        RunAsync(user, "readmit", Party.Sender(sender, deployment), reason, controller.ReadmitSenderAsync, ct);

    public Task<ActionResult> QuarantinePreSqAsync(ClaimsPrincipal user, uint preSq, string? reason, CancellationToken ct) =>
        RunAsync(user, "quarantine", Party.PreSq(preSq, deployment), reason, controller.QuarantinePreSqAsync, ct);

    public Task<ActionResult> ReadmitPreSqAsync(ClaimsPrincipal user, uint preSq, string? reason, CancellationToken ct) =>
        RunAsync(user, "readmit", Party.PreSq(preSq, deployment), reason, controller.ReadmitPreSqAsync, ct);

    private async Task<ActionResult> RunAsync(ClaimsPrincipal user, string action, Party party, string? reason,
        Func<uint, string, CancellationToken, Task<ManagementActionReply>> call, CancellationToken ct)
    {
        var allowed = await authorization.AuthorizeAsync(user, ConsolePolicies.Operator).ConfigureAwait(false);
        var name = AttributedReason.UserOf(user);
        var metric = $"{action}-{party.Kind}";
        if (!allowed.Succeeded)
        {
            metrics.Actions.Add(1, new("action", metric), new("outcome", "refused_role"));
            log.LogWarning("console user {User} refused: {Action} {Party} needs the operator role", name, action, party.Label);
            return new ActionResult(false, true, $"refused: {action} needs the operator role");
        }
        if (!party.Known)
        {
            metrics.Actions.Add(1, new("action", metric), new("outcome", "invalid"));
            return new ActionResult(false, false, $"not sent: there is no {party.Label} in this deployment");
        }
        reason = (reason ?? "").Trim();
        if (AttributedReason.Problem(name, reason) is { } problem)
        {
            metrics.Actions.Add(1, new("action", metric), new("outcome", "invalid"));
            return new ActionResult(false, false, "not sent: " + problem);
        }
        try
        {
            var reply = await call(party.Id, AttributedReason.Of(name, reason), ct).ConfigureAwait(false);
            metrics.Actions.Add(1, new("action", metric), new("outcome", "sent"));
            return new ActionResult(true, false, $"{action} of {party.Label} recorded in the audit log (record {reply.AuditSequence}); {(reply.Applied ? "applied" : reply.Status)}", reply.AuditSequence);
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            metrics.Actions.Add(1, new("action", metric), new("outcome", "failed"));
            log.LogWarning("{Action} {Party} failed at the controller: {Error}", action, party.Label, e.Message);
            return new ActionResult(false, false, $"the controller refused or did not answer: {e.Message}");
        }
    }

    /// <summary>A sender or pre-SQ named by a request, and whether the deployment has it.</summary>
    private sealed record Party(string Kind, uint Id, bool Known)
    {
        public string Label => Kind == "sender" ? $"sender {Id}" : $"pre-SQ {Id}";

        public static Party Sender(uint id, DeploymentConfig d) =>
            new("sender", id, d.Agents.SelectMany(a => a.Senders).Concat(d.Routes.Select(r => r.Sender)).Any(s => s == id));

        public static Party PreSq(uint id, DeploymentConfig d) => new("pre-sq", id, d.PreSqs.Any(p => p.Id == id));
    }
}
