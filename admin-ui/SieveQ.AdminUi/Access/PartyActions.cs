using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.AdminUi.Access;

/// <summary>What became of a change request; <see cref="Applied"/> when the controller said it was carried out.</summary>
public sealed record ActionResult(bool Sent, bool Refused, string Message, long AuditSequence = 0, bool Applied = false);

/// <summary>
/// Quarantine and readmission of a sender or a pre-SQ, and an administrator's start, stop and replacement of a pre-SQ
/// process and recovery of a replica-SQ (one, or a round over all), for the pages' handlers and the form endpoints
/// alike: the policy (operator; administrator for the processes, as at the controller) is checked here, on the server, for the user making the request, whatever the page
/// showed; the party must be one of the deployment's. The controller audits the request under the console's key, with
/// the console user named in the reason.
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

    public Task<ActionResult> StartPreSqAsync(ClaimsPrincipal user, uint preSq, string? reason, CancellationToken ct) =>
        RunAsync(user, "start", Party.PreSq(preSq, deployment), reason, controller.StartPreSqAsync, ct, ConsolePolicies.Administrator);

    public Task<ActionResult> StopPreSqAsync(ClaimsPrincipal user, uint preSq, string? reason, CancellationToken ct) =>
        RunAsync(user, "stop", Party.PreSq(preSq, deployment), reason, controller.StopPreSqAsync, ct, ConsolePolicies.Administrator);

    public Task<ActionResult> ReplacePreSqAsync(ClaimsPrincipal user, uint preSq, string? reason, CancellationToken ct) =>
        RunAsync(user, "replace", Party.PreSq(preSq, deployment), reason, controller.ReplacePreSqAsync, ct, ConsolePolicies.Administrator);

    public Task<ActionResult> RecoverReplicaAsync(ClaimsPrincipal user, uint replica, string? reason, CancellationToken ct) =>
        RunAsync(user, "recover", Party.Replica(replica, deployment), reason, controller.RecoverReplicaAsync, ct, ConsolePolicies.Administrator);

    /// <summary>A recovery round: every replica in turn; the reply comes when the round is over (tens of seconds).</summary>
    public Task<ActionResult> RecoverReplicasAsync(ClaimsPrincipal user, string? reason, CancellationToken ct) =>
        RunAsync(user, "recover", Party.EveryReplica(deployment), reason, (_, r, c) => controller.RecoverReplicasAsync(r, c), ct, ConsolePolicies.Administrator);

    /// <summary>
    /// Whether <paramref name="user"/> may act on processes (start, stop and replace pre-SQs, recover replicas): for
    /// the pages to offer the buttons only; each request is checked again when it is made.
    /// </summary>
    public async Task<bool> MayRunProcessesAsync(ClaimsPrincipal user) =>
        (await authorization.AuthorizeAsync(user, ConsolePolicies.Administrator).ConfigureAwait(false)).Succeeded;

    private async Task<ActionResult> RunAsync(ClaimsPrincipal user, string action, Party party, string? reason,
        Func<uint, string, CancellationToken, Task<ManagementActionReply>> call, CancellationToken ct, string policy = ConsolePolicies.Operator)
    {
        var allowed = await authorization.AuthorizeAsync(user, policy).ConfigureAwait(false);
        var name = AttributedReason.UserOf(user);
        var metric = $"{action}-{party.Kind}";
        if (!allowed.Succeeded)
        {
            metrics.Actions.Add(1, new("action", metric), new("outcome", "refused_role"));
            log.LogWarning("{User} refused: {Action} {Party} needs the {Role} role", name, action, party.Label, policy);
            return new ActionResult(false, true, $"refused: {action} needs the {policy} role");
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
            // A process change's status is what was done ("replaced: started pid 4121, healthy"), worth showing whole.
            var outcome = reply.Applied && policy == ConsolePolicies.Operator ? "applied" : reply.Status;
            return new ActionResult(true, false, $"{action} of {party.Label} recorded in the audit log (record {reply.AuditSequence}); {outcome}", reply.AuditSequence, reply.Applied);
        }
        catch (GrpcCallException e) when (e.Status == GrpcStatusCode.PermissionDenied)
        {
            // The console's own key is below the call's role at the controller (`init` pins it as an operator), which
            // audited the refusal; a refusal, not a failure to answer, so the page shows it as one.
            metrics.Actions.Add(1, new("action", metric), new("outcome", "refused_by_controller"));
            log.LogWarning("{Action} {Party} refused by the controller: {Error}", action, party.Label, e.Message);
            return new ActionResult(false, true, $"refused by the controller for the console's key: {e.Message}");
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            metrics.Actions.Add(1, new("action", metric), new("outcome", "failed"));
            log.LogWarning("{Action} {Party} failed at the controller: {Error}", action, party.Label, e.Message);
            return new ActionResult(false, false, $"the controller refused or did not answer: {e.Message}");
        }
    }

    /// <summary>A sender, pre-SQ or replica-SQ named by a request (or every replica, for a round), and whether the deployment has it.</summary>
    private sealed record Party(string Kind, uint Id, bool Known)
    {
        public string Label => Kind switch
        {
            "sender" => $"sender {Id}",
            "replica" => $"replica-SQ {Id}",
            "replicas" => "every replica-SQ",
            _ => $"pre-SQ {Id}",
        };

        public static Party Replica(uint id, DeploymentConfig d) => new("replica", id, d.Replicas.Any(r => r.Id == id));

        public static Party EveryReplica(DeploymentConfig d) => new("replicas", 0, d.Replicas.Count > 0);

        public static Party Sender(uint id, DeploymentConfig d) =>
            new("sender", id, d.Agents.SelectMany(a => a.Senders).Concat(d.Routes.Select(r => r.Sender)).Any(s => s == id));

        public static Party PreSq(uint id, DeploymentConfig d) => new("pre-sq", id, d.PreSqs.Any(p => p.Id == id));
    }
}
