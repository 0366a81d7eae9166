using System.Globalization;
using System.Security.Claims;
using Google.Protobuf;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Enrolment and revocation of senders and receivers, for their pages and the form endpoints alike: the operator policy
/// is checked here, on the server, for the user making the request. An enrolment takes the request `sieveq enrol
/// request` writes on the party's host (name, both public keys, proof of possession), checked here as the replicas will check
/// it, so a malformed one never reaches the controller. The controller checks again, audits and orders it.
/// </summary>
public sealed class EnrolmentActions(IAuthorizationService authorization, IControllerGateway controller, ConsoleMetrics metrics, ILogger<EnrolmentActions> log)
{
    /// <summary>The request file's own bound (<see cref="PartyEnrolmentRequest.MaxFileBytes"/>).</summary>
    public const int MaxRequestCharacters = PartyEnrolmentRequest.MaxFileBytes;

    public Task<ActionResult> EnrolAsync(ClaimsPrincipal user, string? requestJson, string? senderId, string? reason, CancellationToken ct) =>
        EnrolAsync(user, receiver: false, requestJson, senderId, reason, ct);

    public Task<ActionResult> RevokeAsync(ClaimsPrincipal user, uint sender, string? reason, CancellationToken ct) =>
        RevokeAsync(user, receiver: false, sender, reason, ct);

    public Task<ActionResult> EnrolReceiverAsync(ClaimsPrincipal user, string? requestJson, string? receiverId, string? reason, CancellationToken ct) =>
        EnrolAsync(user, receiver: true, requestJson, receiverId, reason, ct);

    public Task<ActionResult> RevokeReceiverAsync(ClaimsPrincipal user, uint receiver, string? reason, CancellationToken ct) =>
        RevokeAsync(user, receiver: true, receiver, reason, ct);

    private async Task<ActionResult> EnrolAsync(ClaimsPrincipal user, bool receiver, string? requestJson, string? partyId, string? reason, CancellationToken ct)
    {
        var role = receiver ? "receiver" : "sender";
        var action = "enrol-" + role;
        if (await RefusedAsync(user, action).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        var id = 0u;
        if (!string.IsNullOrWhiteSpace(partyId)
            && (!uint.TryParse(partyId.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out id) || id is 0 or > int.MaxValue))
        {
            return Invalid(action, $"the {role} id is a whole number from 1 to {int.MaxValue}, or empty for the next free id");
        }
        if (ReasonProblem(user, reason, required: false) is { } reasonProblem)
        {
            return Invalid(action, reasonProblem);
        }
        PartyEnrolmentRequest request;
        try
        {
            request = PartyEnrolmentRequest.Parse(requestJson ?? "", "the enrolment request");
        }
        catch (DeploymentException e)
        {
            return Invalid(action, e.Message);
        }
        var (name, signing, agreement, proof) = (request.Name, ByteString.CopyFrom(request.SignaturePublicKey), ByteString.CopyFrom(request.AgreementPublicKey),
            ByteString.CopyFrom(request.Proof));
        var label = id == 0 ? $"{role} '{name}' (next free id)" : $"{role} '{name}' as {id}";
        return await SendAsync(action, "enrolment of " + label, () => receiver
            ? controller.EnrolReceiverAsync(new EnrolReceiverRequest
            {
                Receiver = id, Name = name, SignaturePublicKey = signing, AgreementPublicKey = agreement, Proof = proof, Reason = Attributed(user, reason),
            }, ct)
            : controller.EnrolSenderAsync(new EnrolSenderRequest
            {
                Sender = id, Name = name, SignaturePublicKey = signing, AgreementPublicKey = agreement, Proof = proof, Reason = Attributed(user, reason),
            }, ct)).ConfigureAwait(false);
    }

    private async Task<ActionResult> RevokeAsync(ClaimsPrincipal user, bool receiver, uint id, string? reason, CancellationToken ct)
    {
        var role = receiver ? "receiver" : "sender";
        var action = "revoke-" + role;
        if (await RefusedAsync(user, action).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        if (id is 0 or > int.MaxValue)
        {
            return Invalid(action, $"the {role} id is a whole number from 1 to {int.MaxValue}");
        }
        if (ReasonProblem(user, reason, required: true) is { } reasonProblem)
        {
            return Invalid(action, reasonProblem);
        }
        return await SendAsync(action, $"revocation of {role} {id}", () => receiver
            ? controller.RevokeReceiverAsync(id, Attributed(user, reason), ct)
            : controller.RevokeSenderAsync(id, Attributed(user, reason), ct)).ConfigureAwait(false);
    }

    private async Task<ActionResult?> RefusedAsync(ClaimsPrincipal user, string action)
    {
        if ((await authorization.AuthorizeAsync(user, ConsolePolicies.Operator).ConfigureAwait(false)).Succeeded)
        {
            return null;
        }
        metrics.Actions.Add(1, new("action", action), new("outcome", "refused_role"));
        log.LogWarning("{User} refused: {Action} needs the operator role", ConsoleCaller.Of(user), action);
        return new ActionResult(false, true, $"refused: {action} needs the operator role");
    }

    private ActionResult Invalid(string action, string why)
    {
        metrics.Actions.Add(1, new("action", action), new("outcome", "invalid"));
        return new ActionResult(false, false, "not sent: " + why);
    }

    /// <summary>A revocation is for good, so it needs a reason; an enrolment may go without.</summary>
    private static string? ReasonProblem(ClaimsPrincipal user, string? reason, bool required)
    {
        reason = (reason ?? "").Trim();
        if (required && reason.Length == 0)
        {
            return "a revocation needs a reason (it is permanent: the id is never enrolled again)";
        }
        return AttributedReason.Problem(AttributedReason.UserOf(user), reason);
    }

    private static string Attributed(ClaimsPrincipal user, string? reason) => AttributedReason.Of(AttributedReason.UserOf(user), (reason ?? "").Trim());

    private async Task<ActionResult> SendAsync(string action, string what, Func<Task<ManagementActionReply>> call)
    {
        try
        {
            var reply = await call().ConfigureAwait(false);
            metrics.Actions.Add(1, new("action", action), new("outcome", "sent"));
            return new ActionResult(true, false, $"{what} recorded in the audit log (record {reply.AuditSequence}); {(reply.Applied ? "applied: " : "")}{reply.Status}", reply.AuditSequence);
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            metrics.Actions.Add(1, new("action", action), new("outcome", "failed"));
            log.LogWarning("{Action} failed at the controller: {Error}", action, e.Message);
            return new ActionResult(false, false, $"the controller refused or did not answer: {e.Message}");
        }
    }
}
